import pino from 'pino';
import { lazyChildLoggerFactory } from '../../src/http/lazy-child-logger';

function setup(level: string) {
  const lines: Record<string, unknown>[] = [];
  const parent = pino(
    { level },
    { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  const childSpy = jest.spyOn(parent, 'child');
  const make = (options: { level?: string } = {}) =>
    lazyChildLoggerFactory.call(
      undefined as never,
      parent,
      { reqId: 'r-1' },
      options,
      undefined as never,
    ) as unknown as pino.Logger;
  return { lines, childSpy, make };
}

describe('lazy request child logger', () => {
  it('creates no child for lines below the level, and binds the request id to those above', () => {
    const { lines, childSpy, make } = setup('warn');
    const log = make();
    log.info('incoming request');
    log.debug('detail');
    expect(childSpy).not.toHaveBeenCalled();
    expect(lines).toEqual([]);
    log.warn({ campaignId: 'c1' }, 'slow');
    expect(childSpy).toHaveBeenCalledTimes(1);
    expect(lines).toEqual([
      expect.objectContaining({ reqId: 'r-1', campaignId: 'c1', msg: 'slow' }),
    ]);
  });

  it("honours a route's own level and level changes", () => {
    const { lines, make } = setup('info');
    const quiet = make({ level: 'warn' });
    quiet.info('not written');
    expect(quiet.level).toBe('warn');
    const loud = make();
    loud.info('written');
    loud.level = 'error';
    loud.warn('not written either');
    expect(lines.map((l) => l.msg)).toEqual(['written']);
  });

  it('hands out further children bound to the request', () => {
    const { lines, make } = setup('info');
    make().child({ correlationId: 'x' }).info('with both');
    expect(lines).toEqual([expect.objectContaining({ reqId: 'r-1', correlationId: 'x' })]);
  });
});
