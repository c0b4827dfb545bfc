// Shell blocks of README.md and docs/*.md, parsed by the convention of docs/writing-docs.md.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const SHELLS = new Set(['sh', 'bash', 'shell', 'console']);

export interface DocCommand {
  /** The command as bash runs it (continuations joined, trailing comment removed). */
  text: string;
  /** 1-based line in the document. */
  line: number;
  exit: number;
  /** Substrings the output must contain. */
  contains: string[];
  skip?: string;
}

export interface DocBlock {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  /** `runnable`, `not-runnable`, or undefined when untagged (or malformed, see `problem`). */
  tag?: 'runnable' | 'not-runnable';
  reason?: string;
  problem?: string;
  body: string[];
}

/** The Markdown files whose shell blocks are checked: README.md, then docs/*.md by name. */
export function docFiles(root: string): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => join('docs', f));
  return ['README.md', ...docs];
}

/** Every fenced block of one Markdown text whose language is a shell. */
export function shellBlocks(file: string, markdown: string): DocBlock[] {
  const lines = markdown.split('\n');
  const out: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*(\S*)\s*(.*)$/.exec(lines[i] ?? '');
    if (!open) continue;
    const [, indent = '', fence = '', lang = '', info = ''] = open;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const l = lines[j] ?? '';
      if (l.trimStart().startsWith(fence) && l.trim().replace(/[`~]/g, '') === '') break;
      body.push(l.startsWith(indent) ? l.slice(indent.length) : l.trimStart());
    }
    if (SHELLS.has(lang)) out.push({ file, line: i + 1, lang, body, ...parseTag(info.trim()) });
    i = j;
  }
  return out;
}

function parseTag(info: string): Pick<DocBlock, 'tag' | 'reason' | 'problem'> {
  if (info === 'runnable') return { tag: 'runnable' };
  const not = /^not-runnable(?::\s*(.*))?$/.exec(info);
  if (not) {
    const reason = not[1]?.trim();
    return reason ? { tag: 'not-runnable', reason } : { problem: 'not-runnable without a reason' };
  }
  return { problem: info ? `unknown tag "${info}"` : 'untagged' };
}

/** Splits a runnable block into commands with their expectations. */
export function commands(block: DocBlock): DocCommand[] {
  const out: DocCommand[] = [];
  let pending: { text: string; line: number; comment: string } | undefined;
  for (let i = 0; i < block.body.length; i++) {
    const raw = block.body[i] ?? '';
    const line = block.line + 1 + i;
    const trimmed = raw.trim();
    if (pending) {
      // A continuation of the previous line.
      const text = trimmed.endsWith('\\') ? trimmed.slice(0, -1) : trimmed;
      pending.text += ` ${text}`;
      if (!trimmed.endsWith('\\')) {
        out.push(toCommand(pending.text, pending.line));
        pending = undefined;
      }
      continue;
    }
    if (trimmed === '') continue;
    if (trimmed.startsWith('#')) {
      const last = out[out.length - 1];
      const expect = /^#\s*=>\s*(.*)$/.exec(trimmed);
      if (expect && last) applyExpectation(last, expect[1] ?? '');
      continue;
    }
    if (trimmed.endsWith('\\')) {
      pending = { text: trimmed.slice(0, -1), line, comment: '' };
      continue;
    }
    out.push(toCommand(trimmed, line));
  }
  if (pending) out.push(toCommand(pending.text, pending.line));
  return out;
}

function toCommand(full: string, line: number): DocCommand {
  const { code, comment } = splitComment(full);
  const cmd: DocCommand = { text: code.trim(), line, exit: 0, contains: [] };
  const skip = /^skip:\s*(.+)$/.exec(comment);
  if (skip) cmd.skip = skip[1]!.trim();
  const expect = /^=>\s*(.*)$/.exec(comment);
  if (expect) applyExpectation(cmd, expect[1] ?? '');
  return cmd;
}

function applyExpectation(cmd: DocCommand, text: string): void {
  const exit = /^exit (\d+)(?::\s*(.*))?$/.exec(text.trim());
  if (exit) {
    cmd.exit = Number(exit[1]);
    text = exit[2] ?? '';
  }
  for (const part of text.split('…')) if (part.trim()) cmd.contains.push(part.trim());
}

/** Splits `cmd  # comment` at the first `#` that starts a shell comment (outside quotes). */
export function splitComment(line: string): { code: string; comment: string } {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quote) {
      if (ch === '\\' && quote === '"') i++;
      else if (ch === quote) quote = undefined;
    } else if (ch === '\\') i++;
    else if (ch === "'" || ch === '"') quote = ch;
    else if (ch === '#' && (i === 0 || /\s/.test(line[i - 1] ?? ''))) {
      return { code: line.slice(0, i), comment: line.slice(i + 1).trim() };
    }
  }
  return { code: line, comment: '' };
}

/** Every shell block of the project's docs. */
export function projectBlocks(root: string): DocBlock[] {
  return docFiles(root).flatMap((f) => shellBlocks(f, readFileSync(join(root, f), 'utf8')));
}
