import type { LoggerOptions } from 'pino';
import type { Config } from '../config/config';

/**
 * pino's options from the config: readable pino-pretty lines for people running `npm start`,
 * one JSON object a line everywhere else (production, tests, log shippers).
 */
export function loggerOptions(
  config: Pick<Config, 'logLevel' | 'logFormat'>,
  name?: string,
): LoggerOptions {
  return {
    ...(name === undefined ? {} : { name }),
    level: config.logLevel,
    ...(config.logFormat === 'pretty' && {
      transport: {
        target: 'pino-pretty',
        options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', singleLine: true },
      },
    }),
  };
}
