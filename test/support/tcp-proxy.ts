import net from 'node:net';

/**
 * A TCP proxy a test can cut, to make a real dependency unreachable or half-reachable without
 * touching the dependency itself:
 * - `pass`: bytes flow both ways;
 * - `blackhole`: connections stay open, nothing flows either way (a hung network);
 * - `drop-downstream`: requests reach the server, its answers never come back;
 * - `refuse`: every connection is reset at once (the server looks stopped).
 */
export type ProxyMode = 'pass' | 'blackhole' | 'drop-downstream' | 'refuse';

export class TcpProxy {
  mode: ProxyMode = 'pass';
  /** Chunks clients have sent, whatever the mode: tells whether anyone still tries. */
  chunksFromClients = 0;
  /** Connections clients opened, whatever the mode (also those refused). */
  connections = 0;
  /** Each chunk, either way, arrives this much later (a slower network or database). */
  delayMs = 0;
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();

  private constructor(
    private readonly upstreamHost: string,
    private readonly upstreamPort: number,
  ) {
    this.server = net.createServer((client) => {
      this.handle(client);
    });
  }

  static async start(upstream: string): Promise<TcpProxy & { address: string; port: number }> {
    const index = upstream.lastIndexOf(':');
    const proxy = new TcpProxy(upstream.slice(0, index), Number(upstream.slice(index + 1)));
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    const { port } = proxy.server.address() as net.AddressInfo;
    return Object.assign(proxy, { address: `127.0.0.1:${port}`, port });
  }

  /** Sets the mode; `refuse` also resets every open connection. */
  set(mode: ProxyMode): void {
    this.mode = mode;
    if (mode === 'refuse') for (const socket of this.sockets) socket.destroy();
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) =>
      this.server.close(() => {
        resolve();
      }),
    );
  }

  private handle(client: net.Socket): void {
    this.connections++;
    if (this.mode === 'refuse') {
      client.destroy();
      return;
    }
    const upstream = net.connect({ host: this.upstreamHost, port: this.upstreamPort });
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('close', () => {
        this.sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
      socket.on('error', () => undefined);
    }
    // Timers of one duration fire in the order they were set: a delayed stream stays in order.
    const later = (write: () => void) => {
      if (this.delayMs > 0) setTimeout(write, this.delayMs);
      else write();
    };
    client.on('data', (chunk) => {
      this.chunksFromClients++;
      if (this.mode === 'pass' || this.mode === 'drop-downstream') {
        later(() => upstream.write(chunk));
      }
    });
    upstream.on('data', (chunk) => {
      if (this.mode === 'pass') later(() => client.write(chunk));
    });
  }
}
