import { json } from '../format';
import { DRY_RUN_NOTE, ExitCode, stringValue, yesOption } from '../ops-command';
import type { OpsCommand } from '../ops-command';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const eraseCommand: OpsCommand = {
  name: 'erase',
  summary: "Erase a donor's personal data (dry run unless --yes)",
  help: `Usage: npm run ops -- erase (--email <address> | --donation <donationId>) [--yes]

The erasure of POST /v1/donor-erasures, through the same service: every donation of the donor
(found by the address, or by the address of the named donation) keeps its amount, date,
campaign and receipt number, and its donor becomes "Erased donor" with no address and no
message; raw webhook bodies of those donations and the campaigns' cached wall pages are deleted.
Erasing twice is harmless. See docs/receipts-and-privacy.md.

  --email <address>      the donor's e-mail address
  --donation <id>        one of the donor's donations
  --yes, -y              do it; without it, change nothing`,
  options: { email: { type: 'string' }, donation: { type: 'string' }, ...yesOption },
  validate: (args) => {
    const email = stringValue(args, 'email');
    const donation = stringValue(args, 'donation');
    if (args.positionals.length > 0) return 'erase takes no arguments';
    if ((email === undefined) === (donation === undefined))
      return 'erase takes one of --email or --donation';
    if (email !== undefined && !/^[^\s@]+@[^\s@]+$/.test(email))
      return '--email must be an address';
    if (donation !== undefined && !UUID.test(donation)) return '--donation must be a donation id';
    return undefined;
  },
  audit: (args) => {
    if (args.values.yes !== true) return undefined;
    const donation = stringValue(args, 'donation');
    return donation === undefined
      ? { action: 'erase', detail: { by: 'email' } }
      : { action: 'erase', donationId: donation, detail: { by: 'donation' } };
  },
  async run(ctx, args, io) {
    const email = stringValue(args, 'email');
    const donation = stringValue(args, 'donation');
    if (args.values.yes !== true) {
      io.out(
        `Would erase the donor of ${donation ?? 'that address'} from every donation of theirs.`,
      );
      io.out(DRY_RUN_NOTE);
      return ExitCode.ok;
    }
    const done = await ctx.erasure.erase(
      email !== undefined ? { email } : { donationId: donation ?? '' },
    );
    io.out(json(done));
    return ExitCode.ok;
  },
};
