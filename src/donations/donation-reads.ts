import type { Client } from '@temporalio/client';
import { AppError } from '../errors/error-catalogue';
import { donationWorkflowId, getStateQuery } from '../../workflows/contracts';
import type { DonationRepository } from './donation-repository';
import type { DonorDetailsRepository } from './donor-details-repository';
import type { DonationView } from './donation-schemas';
import { startedView, toView } from './donation-views';
import { readDonationFromHistory } from './donation-from-history';

/** The longest `GET /v1/donations/:id?wait=` holds a request. */
export const MAX_WAIT_SECONDS = 30;

export interface DonationReadsDeps {
  temporal: Client;
  donations: DonationRepository;
  donorDetails: DonorDetailsRepository;
}

/** `GET /v1/donations/:id`: a donation as Postgres has it, or as its started workflow does. */
export class DonationReads {
  constructor(private readonly deps: DonationReadsDeps) {}

  /**
   * Postgres is the truth; a running workflow adds its live state. With `waitSeconds`, a
   * donation still waiting for its payment action is read again (with backoff) until the action
   * exists, the donation is decided, the wait is over or `signal` aborts; that answer leaves out
   * the live state, which would cost the worker a query per poll. Accepted but not yet recorded
   * (the worker is behind): answered from the started workflow's input and the donor the edge
   * took.
   */
  async get(
    id: string,
    clientId: string | undefined,
    waitSeconds = 0,
    signal?: AbortSignal,
  ): Promise<DonationView> {
    const deadline = Date.now() + Math.min(waitSeconds, MAX_WAIT_SECONDS) * 1000;
    const workflowId = donationWorkflowId(id);
    let started: DonationView | undefined;
    const wait = { accepted: false };
    let pauseMs = 100;
    for (;;) {
      let view: DonationView | undefined;
      try {
        const stillWaiting = deadline - Date.now() > 0 && !signal?.aborted;
        const read = await this.read(id, clientId, started, stillWaiting ? wait : undefined);
        view = read?.view;
        if (read && !read.recorded) started = view;
      } catch (error) {
        // Temporal could not say whether an unrecorded donation exists: ask again while waiting.
        const unsure = error instanceof AppError && error.code === 'service-unavailable';
        if (!unsure || deadline - Date.now() <= 0 || signal?.aborted) throw error;
      }
      const waiting = !view || (view.paymentAction === null && view.status === 'PENDING');
      const left = deadline - Date.now();
      if (view && (!waiting || left <= 0 || signal?.aborted)) {
        if (waitSeconds > 0) return view;
        return { ...view, workflow: await this.liveState(workflowId) };
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(pauseMs, left)));
      pauseMs = Math.min(pauseMs * 2, 1_000);
    }
  }

  /**
   * The row's view; else the started workflow's (`started`, once read, is not read again: the
   * input of a workflow never changes). While a wait lasts (`waiting`), a donation the edge took
   * (its donor's details are saved before the start) is only read again from Postgres, where
   * the worker records it soon: undefined, and no read of Temporal's history per long poll.
   * `waiting.accepted` remembers that for the wait's later polls: one statement each.
   */
  private async read(
    id: string,
    clientId: string | undefined,
    started: DonationView | undefined,
    waiting: { accepted: boolean } | undefined,
  ): Promise<{ view: DonationView; recorded: boolean } | undefined> {
    const donation = await this.deps.donations.findById(id);
    if (donation) {
      if (clientId !== undefined && donation.clientId !== clientId) {
        throw new AppError('donation-not-found');
      }
      return { view: toView(donation), recorded: true };
    }
    if (started) return { view: started, recorded: false };
    if (waiting && (waiting.accepted || (await this.deps.donorDetails.find(id)))) {
      waiting.accepted = true;
      return undefined;
    }
    const found = await readDonationFromHistory(this.deps.temporal, donationWorkflowId(id));
    if (!found || (clientId !== undefined && found.input.clientId !== clientId)) {
      throw new AppError('donation-not-found');
    }
    const details = await this.deps.donorDetails.find(id);
    return { view: startedView(found.input, found.startedAt, details), recorded: false };
  }

  private async liveState(workflowId: string): Promise<DonationView['workflow']> {
    try {
      return await this.deps.temporal.connection.withDeadline(Date.now() + 1_000, async () => {
        const handle = this.deps.temporal.workflow.getHandle(workflowId);
        const description = await handle.describe();
        if (description.status.name !== 'RUNNING') return { id: workflowId, running: false };
        const state = await handle.query(getStateQuery);
        return { id: workflowId, running: true, state };
      });
    } catch {
      // Temporal is an enrichment here; the answer from Postgres stands on its own.
      return undefined;
    }
  }
}
