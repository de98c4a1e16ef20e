import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './free-port';
import { isPortOpen } from '../../src/temporal/dev-server';

const deployConfig = path.resolve(__dirname, '../../deploy/nginx.conf');
/** Debian installs it in /usr/sbin, which is not on every user's PATH. */
const binary = existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx';

export interface Nginx {
  url: string;
  stop(): Promise<void>;
}

/**
 * Runs Debian's nginx as a child process with deploy/nginx.conf as shipped, except for what
 * only a test changes: its upstream servers are `upstreams` (host:port), it listens on a free
 * loopback port, and every answer names the upstream that gave it (`X-Galang-Upstream`).
 */
export async function startNginx(upstreams: readonly string[]): Promise<Nginx> {
  const shipped = readFileSync(deployConfig, 'utf8');
  const servers = shipped.match(/^\s*server api-\d+:\d+ (.*);$/m);
  if (!servers) throw new Error('deploy/nginx.conf names no api-N upstream servers');
  return startNginxSite((listen) =>
    shipped
      .replace(/^\s*server api-\d+:\d+ .*;\n/gm, '')
      .replace(
        /(upstream galang_api \{\n)/,
        `$1${upstreams.map((u) => `    server ${u} ${servers[1] ?? ''};\n`).join('')}`,
      )
      .replace(/listen 80;/, `listen ${listen};`),
  );
}

/**
 * Runs nginx with one site (what a deploy/ file holds, for the http block), made by `site` from
 * the loopback address to listen on and the temp dir that holds the prefix, pid, logs and temp
 * files; `daemon off` keeps it our child.
 */
export async function startNginxSite(
  site: (listen: string, prefix: string) => string,
): Promise<Nginx> {
  const prefix = mkdtempSync(path.join(os.tmpdir(), 'galang-nginx-'));
  const port = await freePort();
  for (const dir of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) {
    mkdirSync(path.join(prefix, dir));
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
${site(`127.0.0.1:${port}`, prefix)}
}
`;
  const file = path.join(prefix, 'nginx.conf');
  writeFileSync(file, config);
  const child = spawn(binary, ['-p', prefix, '-e', path.join(prefix, 'error.log'), '-c', file], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const stderr: string[] = [];
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      resolve();
    });
  });
  for (let i = 0; !(await isPortOpen('127.0.0.1', port)); i++) {
    if (child.exitCode !== null || i > 100) {
      throw new Error(`nginx did not start: ${stderr.join('')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode === null) child.kill('SIGQUIT');
      await exited;
      rmSync(prefix, { recursive: true, force: true });
    },
  };
}
