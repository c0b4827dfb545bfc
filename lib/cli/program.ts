// The root of every command line (the whole CLI's and the serve script's), and how a parsed
// command line ends: its exit code, or one clear line for a fatal start-up error.
import { Command } from 'commander';
import { ExitCode, exitCodeOf } from '#lib/supervisor/exit-codes.ts';
import { OUTPOST_VERSION } from '#lib/version.ts';
import { CliError } from './errors.ts';

/** The `outpost` command, before any subcommand is added. */
export function rootCommand(): Command {
  return (
    new Command('outpost')
      .description(
        'Offline-first edge node agent: a local Kubernetes-shaped API for the node’s pods and devices',
      )
      .version(OUTPOST_VERSION, '--version')
      .showHelpAfterError()
      .configureOutput({ outputError: (s, write) => write(s) })
      // An unknown option, a bad choice or a missing argument is a usage error: exit 2 (as documented
      // in docs/health.md), which `outpost supervise` does not restart. Help and --version exit 0.
      // Set before the subcommands are added: they inherit it.
      .exitOverride((err) => {
        process.exit(err.exitCode === 0 ? 0 : ExitCode.InvalidConfig);
      })
  );
}

/** Parses argv and runs the command it names; sets process.exitCode, or exits on a fatal error. */
export async function parseAndRun(program: Command, argv: string[], exitCode: () => number): Promise<void> {
  try {
    await program.parseAsync(argv);
    if (exitCode()) process.exitCode = exitCode();
  } catch (e) {
    // Configuration (2), data directory / metabase (3) and other fatal start-up errors: one clear line.
    const code = e instanceof CliError ? e.exitCode : exitCodeOf(e);
    if (code !== undefined) {
      process.stderr.write(`error: ${(e as Error).message.replace(/^error: /, '')}\n`);
      process.exit(code);
    }
    throw e;
  }
}
