/**
 * Whether this process has finished booting: its database migrated, Temporal reached, its
 * boot checks passed. Until then it listens (so `/healthz` and `/readyz` answer) but serves
 * nothing else, and readiness says `starting`.
 */
export class BootState {
  private booted = false;

  constructor(booted = false) {
    this.booted = booted;
  }

  get ready(): boolean {
    return this.booted;
  }

  markReady(): void {
    this.booted = true;
  }
}
