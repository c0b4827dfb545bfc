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
