// `outpost status`: what `/readyz?verbose` says, module by module; exit 0 only when ready.
// Global fetch, not the CLI's HTTP client, so this command loads nothing heavy.

export interface StatusFlags {
  server: string;
  token?: string | undefined;
}

/** Prints the readiness of the server's modules; 0 when ready, 1 when not or unreachable. */
export async function status(
  flags: StatusFlags,
  out: (s: string) => void = (s) => process.stdout.write(s),
  err: (s: string) => void = (s) => process.stderr.write(s),
): Promise<number> {
  const url = new URL('/readyz?verbose', flags.server);
  let res: Response;
  try {
    res = await fetch(url, {
      headers: flags.token ? { authorization: `Bearer ${flags.token}` } : {},
      signal: AbortSignal.timeout(10_000),
    });
  } catch (e) {
    const code = (e as { cause?: { code?: string } }).cause?.code;
    err(
      code === 'ECONNREFUSED'
        ? `The connection to the server ${url.host} was refused - is outpost serve running?\n`
        : `Unable to connect to the server: ${(e as Error).message}\n`,
    );
    return 1;
  }
  const body = await res.text();
  out(body.endsWith('\n') ? body : `${body}\n`);
  return res.status === 200 ? 0 : 1;
}
