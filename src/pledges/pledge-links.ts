import { isLinkToken, linkToken } from '../security/link-token';

/**
 * The donor's link to their pledge, `/v1/pledges/<id>/manage?token=…`: an HMAC of the pledge's
 * id under the first link secret (RECEIPT_TOKEN_SECRETS); every listed secret verifies, so the
 * secrets rotate. It opens the pledge without a key (docs/pledges.md).
 */
export class PledgeLinks {
  constructor(private readonly secrets: readonly string[]) {}

  manageLink(pledgeId: string): string {
    return `/v1/pledges/${pledgeId}/manage?token=${this.token(pledgeId)}`;
  }

  token(pledgeId: string): string {
    const [secret] = this.secrets;
    if (secret === undefined) throw new Error('No link secret is configured');
    return linkToken(secret, `pledge:${pledgeId}`);
  }

  verifies(pledgeId: string, token: string): boolean {
    return isLinkToken(this.secrets, `pledge:${pledgeId}`, token);
  }
}
