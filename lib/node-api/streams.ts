// The query of the node API's `/exec`, `/attach` and `/run`, as the API server writes it when it
// proxies PodExecOptions and PodAttachOptions: `command` (repeated), `input`, `output`, `error`,
// `tty` as `1`/`true` (kubelet reads any strconv.ParseBool true).
import * as z from 'zod';

const TRUE = ['1', 't', 'T', 'TRUE', 'true', 'True'];
const flag = z
  .string()
  .optional()
  .transform((v) => v !== undefined && TRUE.includes(v));

export const streamQuery = z.object({
  command: z
    .union([z.string(), z.array(z.string())])
    .transform((v) => (Array.isArray(v) ? v : [v]))
    .optional(),
  input: flag,
  output: flag,
  error: flag,
  tty: flag,
});

export type StreamQuery = z.output<typeof streamQuery>;

/** The streams asked for; with a TTY stderr is merged into stdout (CRI refuses both). */
export const streamsOf = (q: StreamQuery) => ({
  stdin: q.input,
  stdout: q.output,
  stderr: q.error && !q.tty,
  tty: q.tty,
});
