/** The run file that goes with a JSON report path (`X.json` -> `X.run.json`). */
export function runReportPath(jsonReport: string): string;
declare class VitestRunReporter {}
export default VitestRunReporter;
