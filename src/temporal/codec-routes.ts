import cors from '@fastify/cors';
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ValueError } from '@temporalio/common';
import type { Payload } from '@temporalio/common';
import { AppError } from '../errors/error-catalogue';
import { EncryptionCodec } from './payload-codec';
import type { PayloadKey } from './payload-codec';

/** A payload as the Web UI and `temporal --codec-endpoint` send it: base64 in proto JSON. */
const JsonPayload = Type.Object({
  metadata: Type.Optional(Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()])),
  data: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
type JsonPayload = Static<typeof JsonPayload>;
const Payloads = Type.Object({ payloads: Type.Array(JsonPayload, { maxItems: 10_000 }) });
/** Proto JSON leaves an empty list out: `temporal` sends `{}` for no payloads. */
const PayloadsIn = Type.Object({
  payloads: Type.Optional(Type.Array(JsonPayload, { maxItems: 10_000 })),
});

export interface CodecRoutesOptions {
  keys: readonly PayloadKey[];
  /** Web UI origins allowed to call across origins (CORS). */
  uiOrigins: readonly string[];
  /**
   * Without a codec key. Only while the keys are the public development key, which anyone
   * can decrypt with anyway (production refuses it): `npm start`'s Web UI then shows payloads.
   */
  open: boolean;
}

/**
 * The Codec Server protocol (`POST <endpoint>/decode` and `/encode`) on the API, so the Temporal
 * Web UI (`TEMPORAL_CODEC_ENDPOINT`, `--ui-codec-endpoint`) and `temporal --codec-endpoint
 * --codec-auth 'Bearer <codec key>'` show the payloads galang encrypts. The codec role's keys
 * only (`CODEC_KEYS`, which open nothing else), across origins only for the UI's; each call is
 * recorded in the audit log with its payload count, never their contents. Register with the
 * prefix `/v1/codec`.
 */
export const codecRoutes: FastifyPluginAsyncTypebox<CodecRoutesOptions> = async (app, options) => {
  const codec = new EncryptionCodec(options.keys);
  // Its preflight answer comes from its own onRequest hook, before any route's key check.
  await app.register(cors, {
    origin: [...options.uiOrigins],
    methods: ['POST'],
    allowedHeaders: ['authorization', 'content-type', 'x-namespace'],
    credentials: true,
    maxAge: 600,
  });
  for (const operation of ['decode', 'encode'] as const) {
    app.post(
      `/${operation}`,
      {
        bodyLimit: 4 * 1024 * 1024,
        config: {
          auth: options.open ? 'none' : 'codec',
          audit: {
            action: operation,
            subject: (request) => ({
              payloadCount: (request.body as Static<typeof PayloadsIn>).payloads?.length ?? 0,
              detail: namespaceOf(request.headers['x-namespace']),
            }),
          },
        },
        schema: {
          summary: `${operation === 'decode' ? 'Decrypt' : 'Encrypt'} Temporal payloads (Codec Server protocol, the codec role)`,
          body: PayloadsIn,
          response: { 200: Payloads },
        },
      },
      async (request) => {
        try {
          const payloads = await codec[operation]((request.body.payloads ?? []).map(fromJson));
          return { payloads: payloads.map(toJson) };
        } catch (error) {
          if (!(error instanceof ValueError)) throw error;
          throw new AppError('validation-failed', { detail: error.message });
        }
      },
    );
  }
};

/** The Web UI's `X-Namespace`, when it is a sane name, for the audit row. */
function namespaceOf(header: string | string[] | undefined): { namespace: string } | undefined {
  return typeof header === 'string' && /^[A-Za-z0-9._-]{1,128}$/.test(header)
    ? { namespace: header }
    : undefined;
}

function fromJson({ metadata, data }: JsonPayload): Payload {
  return {
    metadata: Object.fromEntries(
      Object.entries(metadata ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64')]),
    ),
    data: Buffer.from(data ?? '', 'base64'),
  };
}

function toJson({ metadata, data }: Payload): JsonPayload {
  return {
    metadata: Object.fromEntries(
      Object.entries(metadata ?? {}).map(([key, value]) => [
        key,
        Buffer.from(value).toString('base64'),
      ]),
    ),
    data: Buffer.from(data ?? new Uint8Array()).toString('base64'),
  };
}
