import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isPortOpen } from '../../src/temporal/dev-server';
import type { Log } from './commands';
import { PROJECT_ROOT } from './temporal-build';
import { Supervised, probing } from './supervisor';

const deployConfig = path.join(PROJECT_ROOT, 'deploy', 'nginx.conf');
/** Debian installs it in /usr/sbin, which is not on every user's PATH. */
export const NGINX_BINARY = existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx';

/**
 * deploy/nginx.conf as shipped, except for what only a local run changes: each upstream block's
 * servers are `upstreams` (host:port, each with that block's shipped server parameters) and it
 * listens on `listen`.
 */
export function balancerSite(upstreams: readonly string[], listen: string): string {
  const shipped = readFileSync(deployConfig, 'utf8');
  if (!/^\s*server api-\d+:\d+ /m.test(shipped)) {
    throw new Error('deploy/nginx.conf names no api-N upstream servers');
  }
  // Each block's run of server lines becomes `upstreams`, with that block's parameters.
  return shipped
    .replace(/(?:^[ \t]*server api-\d+:\d+ .*;\n)+/gm, (servers) => {
      const params = /server api-\d+:\d+ (.*);/.exec(servers)?.[1] ?? '';
      return upstreams.map((upstream) => `    server ${upstream} ${params};\n`).join('');
    })
    .replace(/listen 80;/, `listen ${listen};`);
}

/**
 * A whole nginx.conf around one site (what a deploy/ file holds, for the http block), with its
 * pid, logs and temp files under `prefix`; `daemon off` keeps nginx the caller's child. Every
 * answer names the upstream that gave it (`X-Galang-Upstream`).
 */
export function writeNginxConfig(prefix: string, site: string): string {
  for (const dir of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) {
    mkdirSync(path.join(prefix, dir), { recursive: true });
  }
  const config = `
daemon off;
worker_processes 1;
pid ${prefix}/nginx.pid;
error_log ${prefix}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${prefix}/body;
  proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi;
  uwsgi_temp_path ${prefix}/uwsgi;
  scgi_temp_path ${prefix}/scgi;
  add_header X-Galang-Upstream $upstream_addr always;
${site}
}
`;
  const file = path.join(prefix, 'nginx.conf');
  writeFileSync(file, config);
  return file;
}

/** deploy/nginx.conf in front of the stack's API nodes, on 127.0.0.1:`port`, supervised. */
export function nginxBalancer(
  dir: string,
  port: number,
  upstreams: readonly string[],
  log: Log,
): Supervised {
  mkdirSync(dir, { recursive: true });
  const file = writeNginxConfig(dir, balancerSite(upstreams, `127.0.0.1:${port}`));
  return new Supervised(
    {
      name: 'nginx',
      command: NGINX_BINARY,
      args: ['-p', dir, '-e', path.join(dir, 'error.log'), '-c', file],
      env: { PATH: process.env.PATH ?? '' },
      logFile: path.join(dir, 'nginx.log'),
      ready: probing('nginx listening', () => isPortOpen('127.0.0.1', port)),
    },
    log,
  );
}
