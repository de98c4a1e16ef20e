/** What the donor wall calls a donor who asked not to be named. */
export const ANONYMOUS_NAME = 'Anonymous';

/**
 * The name the public may see, decided once when the donation is recorded and stored apart
 * from the private one (`public_name`), so no public read needs `donor_name` at all.
 */
export function publicNameOf(donor: { name: string; anonymous: boolean }): string {
  return donor.anonymous ? ANONYMOUS_NAME : donor.name;
}
