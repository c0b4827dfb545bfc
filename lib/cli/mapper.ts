import { type Command, Option } from 'commander';
import { VirtualMapper } from '#lib/dmi/virtual-mapper.ts';
import { createLogger, type LogLevel } from '#lib/log.ts';

/** `outpost mapper virtual`: the reference DMI mapper, simulated thermometers for the `virtual` protocol. */
export function addMapper(program: Command): void {
  const mapper = program.command('mapper').description('Device mappers shipped with Outpost');
  mapper
    .command('virtual')
    .description(
      'Run the reference mapper: simulated thermometers (temperature, target-temperature, switch) that register with Outpost over DMI, report their twins every cycle and apply desired values',
    )
    .addOption(
      new Option('--socket <path>', 'this mapper’s DeviceMapperService socket').default(
        './data/virtual-mapper.sock',
      ),
    )
    .addOption(
      new Option('--outpost-dmi <path>', 'Outpost’s DMI socket (serve --dmi-socket)')
        .env('OUTPOST_DMI_SOCKET')
        .default('./data/dmi.sock'),
    )
    .option('--name <name>', 'mapper name', 'virtual-mapper')
    .option('--protocol <name>', 'the protocol whose devices this mapper drives', 'virtual')
    .option('--report-cycle <ms>', 'report cycle for devices whose properties set none', '1000')
    .option('--no-data', 'register without asking for the devices (MapperRegister withData=false)')
    .addOption(
      new Option('--log-level <level>', 'log level')
        .choices(['debug', 'info', 'warn', 'error', 'silent'])
        .default('info'),
    )
    .action(async (o) => {
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
    });
}
