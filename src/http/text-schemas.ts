import { Type } from '@sinclair/typebox';
import type { StringOptions } from '@sinclair/typebox';

/*
 * What galang calls text is what Postgres `text` stores and gives back unchanged: no NUL (SQLSTATE
 * 22021 would strand the donation's first step), no other C0 control or DEL, no lone surrogate
 * (the driver would store U+FFFD instead). Ajv compiles patterns with the `u` flag, so the
 * surrogate range matches only unpaired halves.
 */
const SINGLE_LINE = '^[^\\u0000-\\u001F\\u007F\\uD800-\\uDFFF]*$';
/** As {@link SINGLE_LINE}, but tab, line feed and carriage return are allowed. */
const MULTI_LINE = '^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F\\uD800-\\uDFFF]*$';

/** A one-line text field: a name, a title, a reason. */
export function SingleLineText(options: StringOptions = {}) {
  return Type.String({ ...options, pattern: SINGLE_LINE });
}

/** A free-text field that may hold line breaks: a donor's message. */
export function MultiLineText(options: StringOptions = {}) {
  return Type.String({ ...options, pattern: MULTI_LINE });
}
