/** Whether the runtime knows the time zone (an IANA name such as Asia/Jakarta). */
export function isTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
}
