import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NGINX_BINARY, balancerSite, writeNginxConfig } from '../../scripts/stack/nginx';
import { freePort } from './free-port';
import { isPortOpen } from '../../src/temporal/dev-server';

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
  return startNginxSite((listen) => balancerSite(upstreams, listen));
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
  const file = writeNginxConfig(prefix, site(`127.0.0.1:${port}`, prefix));
  const child = spawn(
    NGINX_BINARY,
    ['-p', prefix, '-e', path.join(prefix, 'error.log'), '-c', file],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
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
