/** Local activities that do no I/O: what remains is Temporal's own cost. */
export function createCalibrationActivities() {
  return {
    async first(): Promise<string> {
      return 'recorded';
    },
    async second(previous: string): Promise<string> {
      return `${previous}+created`;
    },
    async third(previous: string): Promise<string> {
      return `${previous}+credited`;
    },
  };
}

export type CalibrationActivities = ReturnType<typeof createCalibrationActivities>;
