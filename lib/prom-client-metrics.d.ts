// prom-client's default metrics, one module each (lib/process-metrics.ts registers them one by one).
declare module 'prom-client/lib/metrics/*' {
  import type { Registry } from 'prom-client';

  const register: (registry: Registry | undefined, config: object) => void;
  export default register;
}
