// Handlers are typed where they are written (factory.createHandlers); the table only needs their shape.
// biome-ignore lint/suspicious/noExplicitAny: validator middlewares carry their own Env generics.
type AnyHandler = (c: any, next: any) => unknown;

/** What a file under routes/ exports: one handler (or a validator chain) per HTTP method. */
export interface RouteModule {
  GET?: AnyHandler | readonly AnyHandler[];
  POST?: AnyHandler | readonly AnyHandler[];
  PUT?: AnyHandler | readonly AnyHandler[];
  PATCH?: AnyHandler | readonly AnyHandler[];
  DELETE?: AnyHandler | readonly AnyHandler[];
}

export type RouteMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A row of the generated route table: the handler file is imported on the route's first request. */
export interface RouteEntry {
  /** Hono's pattern, e.g. `/api/v1/namespaces/:ns/pods`. */
  path: string;
  /** Matches the path with or without a trailing slash (a 405 rather than a 404 for other methods). */
  pattern: RegExp;
  /** The methods the file exports. */
  methods: readonly RouteMethod[];
  load(): Promise<RouteModule>;
}
