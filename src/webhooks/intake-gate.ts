/**
 * How many webhook requests this process holds at once, from their first byte to their answer:
 * unauthenticated callers can make it read, verify and record only that many bodies together.
 * Past the bound a request is refused before its body is read; providers retry non-2xx answers.
 */
export class IntakeGate {
  private held = 0;

  constructor(private readonly max: number) {}

  /** Takes a place and returns what gives it back (once, however often called); none if full. */
  tryEnter(): (() => void) | undefined {
    if (this.held >= this.max) return undefined;
    this.held += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held -= 1;
    };
  }

  get inFlight(): number {
    return this.held;
  }
}
