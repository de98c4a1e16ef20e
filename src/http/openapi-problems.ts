import { Type } from '@sinclair/typebox';
import { AppError, errorCatalogue } from '../errors/error-catalogue';
import type { ErrorCode } from '../errors/error-catalogue';
import { PROBLEM_CONTENT_TYPE, problemOf } from '../errors/problem';

/** The RFC 9457 document every error answer carries. */
export const ProblemSchema = Type.Object(
  {
    type: Type.String({ description: '`/problems/<code>`' }),
    title: Type.String(),
    status: Type.Integer(),
    code: Type.String({ enum: Object.keys(errorCatalogue) }),
    detail: Type.Optional(Type.String()),
    instance: Type.Optional(Type.String({ description: 'The request path' })),
  },
  { additionalProperties: true },
);

/** Example details, only where the catalogue's title alone would not show what is meant. */
const DETAILS: Partial<Record<ErrorCode, string>> = {
  'validation-failed': 'body/amount must be >= 1',
  'currency-mismatch': 'Campaign demo takes IDR.',
  internal: 'Reference 3f1c… when reporting this.',
};

/** The example problem of one catalogued code, built the way the error handler builds it. */
export function exampleProblem(code: ErrorCode) {
  const detail = DETAILS[code];
  return problemOf(new AppError(code, detail === undefined ? {} : { detail }), '/v1/…');
}

/**
 * OpenAPI responses for these codes, grouped by status, one named example per code, generated
 * from the error catalogue so the document cannot drift from what the API answers.
 */
export function problemResponses(codes: readonly ErrorCode[]): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const { status } = errorCatalogue[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, unknown> = {};
  for (const [status, group] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[String(status)] = {
      description: group.map((code) => `\`${code}\`: ${errorCatalogue[code].title}`).join('; '),
      content: {
        [PROBLEM_CONTENT_TYPE.split(';')[0] ?? 'application/problem+json']: {
          schema: ProblemSchema,
          examples: Object.fromEntries(
            group.map((code) => [
              code,
              { summary: errorCatalogue[code].title, value: exampleProblem(code) },
            ]),
          ),
        },
      },
    };
  }
  return responses;
}
