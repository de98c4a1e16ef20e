import { PROBLEM_TYPE_BASE } from './error-catalogue';
import type { AppError } from './error-catalogue';
import type { ErrorCode } from './error-catalogue';

/** An RFC 9457 problem document as galang sends it. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  code: ErrorCode;
  detail?: string;
  instance?: string;
  [extension: string]: unknown;
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';

export function problemOf(error: AppError, instance?: string): Problem {
  return {
    ...error.extensions,
    type: `${PROBLEM_TYPE_BASE}${error.code}`,
    title: error.title,
    status: error.status,
    code: error.code,
    ...(error.detail === undefined ? {} : { detail: error.detail }),
    ...(instance === undefined ? {} : { instance }),
  };
}
