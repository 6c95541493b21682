/**
 * Set when the process has been asked to stop: readiness answers 503 from then on, so a
 * load balancer stops sending new requests while those in flight finish.
 */
let draining = false;

export const isDraining = () => draining;
export const startDraining = () => {
  draining = true;
};
