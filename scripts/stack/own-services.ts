import { chownSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { run } from './commands';
import type { Log } from './commands';
import { Supervised, probing } from './supervisor';

/**
 * A PostgreSQL server of the stack's own (initdb'd under its folder, on a port of its own), so
 * a soak can restart it without touching the machine's server. Run as the `postgres` user:
 * PostgreSQL refuses to run as root.
 */
export function ownPostgres(name: string, dir: string, port: number, log: Log): Supervised {
  const bin = postgresBin();
  const data = path.join(dir, 'data');
  const uid = Number(run('id', ['-u', 'postgres']).trim());
  const gid = Number(run('id', ['-g', 'postgres']).trim());
  if (!existsSync(path.join(data, 'PG_VERSION'))) {
    mkdirSync(data, { recursive: true, mode: 0o700 });
    chownSync(dir, uid, gid);
    chownSync(data, uid, gid);
    run('runuser', [
      '-u',
      'postgres',
      '--',
      path.join(bin, 'initdb'),
      '-D',
      data,
      '-U',
      'postgres',
      '-A',
      'trust',
      '-E',
      'UTF8',
    ]);
  }
  return new Supervised(
    {
      name,
      command: 'setpriv',
      args: [
        `--reuid=${uid}`,
        `--regid=${gid}`,
        '--init-groups',
        path.join(bin, 'postgres'),
        '-D',
        data,
        '-p',
        String(port),
        '-k',
        dir,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'max_connections=200',
      ],
      env: { PATH: process.env.PATH ?? '', LANG: 'C.UTF-8' },
      logFile: path.join(dir, 'postgres.log'),
      ready: probing(`${name} accepting connections`, async () => {
        run('pg_isready', ['-q', '-h', '127.0.0.1', '-p', String(port)]);
        return true;
      }),
    },
    log,
  );
}

/** A Redis of the stack's own, as docker-compose.yml runs it: a cache, nothing on disk. */
export function ownRedis(dir: string, port: number, log: Log): Supervised {
  mkdirSync(dir, { recursive: true });
  return new Supervised(
    {
      name: 'redis',
      command: 'redis-server',
      args: [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
      ],
      env: { PATH: process.env.PATH ?? '' },
      logFile: path.join(dir, 'redis.log'),
      ready: probing('redis answering', async () => {
        return run('redis-cli', ['-p', String(port), 'ping']).trim() === 'PONG';
      }),
    },
    log,
  );
}

/** The newest PostgreSQL server installed from Debian's packages. */
function postgresBin(): string {
  const root = '/usr/lib/postgresql';
  const versions = readdirSync(root)
    .filter((name) => /^\d+$/.test(name))
    .sort((a, b) => Number(b) - Number(a));
  if (!versions[0]) throw new Error(`No PostgreSQL server under ${root}`);
  return path.join(root, versions[0], 'bin');
}
