import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { LOAD_DYNAMIC_CONFIG } from '../../src/temporal/dev-server';

const root = path.resolve(__dirname, '../..');

/** docker-compose.yml's Temporal gets the settings the edge relies on, as the dev server does. */
describe("compose's Temporal dynamic config", () => {
  it('ends long polls below the early-return budget, as the dev server does', () => {
    const file = parse(
      readFileSync(path.join(root, 'deploy/temporal-dynamic-config.yaml'), 'utf8'),
    ) as Record<string, { value: unknown }[]>;
    const key = 'history.longPollExpirationInterval';
    expect(file[key]?.[0]?.value).toBe(LOAD_DYNAMIC_CONFIG[key]);
    const compose = readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
    expect(compose).toContain(
      './deploy/temporal-dynamic-config.yaml:/etc/temporal/config/dynamicconfig/galang.yaml:ro',
    );
    expect(compose).toContain(
      'DYNAMIC_CONFIG_FILE_PATH: /etc/temporal/config/dynamicconfig/galang.yaml',
    );
  });
});
