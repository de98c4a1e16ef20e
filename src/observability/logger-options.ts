import type { LoggerOptions } from 'pino';
import type { Config } from '../config/config';
import { logRedaction } from './log-redaction';

/**
 * pino's options from the config: readable pino-pretty lines for people running `npm start`,
 * one JSON object a line everywhere else (production, tests, log shippers); secrets and e-mail
 * addresses redacted in both.
 */
export function loggerOptions(
  config: Pick<Config, 'logLevel' | 'logFormat'>,
  name?: string,
): LoggerOptions {
  return {
    ...(name === undefined ? {} : { name }),
    level: config.logLevel,
    redact: logRedaction,
    ...(config.logFormat === 'pretty' && {
      transport: {
        target: 'pino-pretty',
        options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', singleLine: true },
      },
    }),
  };
}
