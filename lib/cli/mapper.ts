import { VirtualMapper } from '#lib/dmi/virtual-mapper.ts';
import { createLogger, type LogLevel } from '#lib/log.ts';

/** `outpost mapper virtual` with the flags commander parsed (lib/cli/main.ts): runs until SIGTERM or SIGINT. */
export async function virtualMapperCommand(o: {
  socket: string;
  outpostDmi: string;
  name: string;
  protocol: string;
  reportCycle: string;
  data?: boolean;
  logLevel: string;
}): Promise<void> {
  const log = createLogger(o.logLevel as LogLevel);
  const vm = new VirtualMapper({
    socket: o.socket,
    dmiSocket: o.outpostDmi,
    name: o.name,
    protocol: o.protocol,
    reportCycleMs: Number(o.reportCycle) || 1000,
    withData: o.data !== false,
    log,
  });
  const stop = () =>
    vm.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  await vm.start();
}
