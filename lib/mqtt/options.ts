import { readFileSync } from 'node:fs';
import type { IClientOptions } from 'mqtt';
import { ConfigError, type ServeConfig } from '#lib/config.ts';

const read = (flag: string, file: string): Buffer => {
  try {
    return readFileSync(file);
  } catch (e) {
    throw new ConfigError(`${flag} ${file}: ${(e as Error).message}`);
  }
};

/** The MQTT client's credentials and TLS settings from the serve flags (files read now: errors are configuration errors). */
export function mqttClientOptions(config: ServeConfig): IClientOptions {
  const o: IClientOptions = {};
  if (config.mqttUsername) o.username = config.mqttUsername;
  if (config.mqttPassword !== undefined) o.password = config.mqttPassword;
  if (config.mqttCa) o.ca = read('--mqtt-ca', config.mqttCa);
  if (config.mqttCert) o.cert = read('--mqtt-cert', config.mqttCert);
  if (config.mqttKey) o.key = read('--mqtt-key', config.mqttKey);
  if (config.mqttInsecure) o.rejectUnauthorized = false;
  return o;
}
