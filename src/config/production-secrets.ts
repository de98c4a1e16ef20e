/** Shortest secret production accepts for the keys and tokens galang itself issues. */
export const MIN_PRODUCTION_SECRET_LENGTH = 16;

/** One secret setting: its values by id (or in order) and the development values it must not use. */
export interface SecretSetting {
  readonly name: string;
  readonly secrets: ReadonlyMap<string, string> | readonly string[];
  /** The public development defaults: refused by value, whatever id they are listed under. */
  readonly dev: readonly string[];
  /** Length is the issuer's business (e.g. a provider's key): only the dev values are checked. */
  readonly anyLength?: boolean;
}

/**
 * Production refuses the published development secrets by value (setting `API_KEYS` to the demo
 * key explicitly is no safer than leaving it unset) and secrets too short to withstand guessing.
 * One problem per offending entry, naming the setting and the id, never the secret.
 */
export function productionSecretProblems(settings: readonly SecretSetting[]): string[] {
  const problems: string[] = [];
  for (const { name, secrets, dev, anyLength } of settings) {
    for (const [id, secret] of entriesOf(secrets)) {
      if (dev.includes(secret)) {
        problems.push(`${name}: "${id}" is the public development value; set a secret of its own`);
      } else if (!anyLength && secret.length < MIN_PRODUCTION_SECRET_LENGTH) {
        problems.push(
          `${name}: the secret of "${id}" must have at least ${MIN_PRODUCTION_SECRET_LENGTH} characters in production`,
        );
      }
    }
  }
  return problems;
}

/**
 * One secret in two settings is one role able to act as another: a client key that is also an
 * operator key is an operator, a metrics token that is a webhook secret lets a scraper forge
 * notifications. Named by setting and id, never printed.
 */
export function sharedSecretProblems(settings: readonly SecretSetting[]): string[] {
  const problems: string[] = [];
  const owners = new Map<string, string>();
  for (const { name, secrets } of settings) {
    const seen = new Set<string>();
    for (const [id, secret] of entriesOf(secrets)) {
      const owner = owners.get(secret);
      if (owner !== undefined && !owner.startsWith(`${name} `) && !seen.has(secret)) {
        problems.push(`${owner} and ${name} "${id}" share one secret: give each role its own`);
      }
      seen.add(secret);
      if (owner === undefined) owners.set(secret, `${name} "${id}"`);
    }
  }
  return problems;
}

/** A setting's secrets by id; a plain list's by position (`#1`, `#2`, …). */
function entriesOf(secrets: SecretSetting['secrets']): [string, string][] {
  return Array.isArray(secrets)
    ? secrets.map((secret: string, index): [string, string] => [`#${index + 1}`, secret])
    : [...(secrets as ReadonlyMap<string, string>).entries()];
}
