/** The ids one case learns as it runs: logical names (`r1`, `d1`) to the provider's ids. */
export interface CaseIds {
  key: string;
  donationId: string;
  campaignId: string;
  providerReference: string | undefined;
  names: Map<string, string>;
}
