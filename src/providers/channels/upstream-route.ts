/**
 * One request's way through the channels: the only object routing allocates per request. The feature layer makes it with
 * the gateway model id being served (channels may serve only some models) and hands it to every vendor call of the request;
 * the channel client fills in where the request went. The request log reads `provider`, `channel` and `attempts` from it.
 */
export class UpstreamRoute {
  /** Every attempt sent for the request, across fallback models too. */
  attempts = 0;
  /** The provider and channel of the last attempt: the one that served, when the request succeeded. */
  provider: string | null = null;
  channel: string | null = null;

  constructor(
    /** The gateway model id being served; a fallback changes it. */
    public model: string,
  ) {}

  /** Moves the route to another model (a fallback); the attempts made so far still count. */
  fallBackTo(model: string): void {
    this.model = model;
  }
}
