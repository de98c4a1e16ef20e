import { Faults, startLoopback } from '../support/standins/loopback';
import { Notifier } from '../support/standins/notifier';
import { startSink } from '../support/standins/sink';

describe('stand-in plumbing', () => {
  test('a hang fault answers nothing: the client gives up, the next call is served', async () => {
    const faults = new Faults();
    const server = await startLoopback({
      routes: [
        { method: 'GET', path: /^\/ping$/, handle: () => ({ status: 200, body: { ok: true } }) },
      ],
      faults,
      notFound: () => ({ status: 404 }),
    });
    faults.add('GET /ping', { kind: 'hang' });
    await expect(
      fetch(`${server.url}/ping`, { signal: AbortSignal.timeout(200) }),
    ).rejects.toThrow();
    expect(await (await fetch(`${server.url}/ping`)).json()).toEqual({ ok: true });
    expect(server.calls.map((c) => c.status)).toEqual(['hang', 200]);
    await server.close();
  });

  test('held notifications are released in any order, or dropped', async () => {
    const sink = await startSink();
    const notifier = new Notifier({ url: sink.url, retryDelayMs: () => undefined });
    notifier.hold = true;
    for (const body of ['a', 'b', 'c']) notifier.notify(body, () => ({}));
    expect(sink.received).toHaveLength(0);
    notifier.release([2, 0], { dropRest: true });
    await notifier.settled();
    // Released together, so their arrival order is the network's; 'b' was dropped.
    expect(sink.received.map((r) => r.body).sort()).toEqual(['a', 'c']);
    expect(notifier.held).toHaveLength(0);
    notifier.close();
    await sink.close();
  });
});
