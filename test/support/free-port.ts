/** A TCP port nothing listens on right now, chosen by the kernel (the worker's own helper). */
export { loopbackPort as freePort } from '../../src/runtime/loopback-port';
