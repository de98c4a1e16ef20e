/**
 * What the donor wall calls a donor who asked not to be named, or was erased. The public name
 * is decided once when the donation is recorded and stored apart from the private one
 * (`public_name`), so no public read needs `donor_name` at all.
 */
export const ANONYMOUS_NAME = 'Anonymous';

/** What a receipt and an operator see of an erased donor (docs/receipts-and-privacy.md). */
export const ERASED_NAME = 'Erased donor';
