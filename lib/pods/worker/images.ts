import type { CriClient } from '#lib/cri/client.ts';
import { isRegistryUnreachable, unreachableCause } from '#lib/cri/pull-errors.ts';
import type { Image } from '#lib/cri/types.ts';
import { timeout } from '#lib/kube/status.ts';
import type { Container } from '#lib/kube/types.ts';
import { backoffDelay } from '#lib/supervisor/backoff.ts';

/** Why a container's image is not there: the waiting reason kubelet shows, and its message. */
export class ImageError extends Error {
  override name = 'ImageError';
  constructor(
    readonly reason: 'ErrImagePull' | 'ImagePullBackOff' | 'ErrImageNeverPull' | 'InvalidImageName',
    message: string,
  ) {
    super(message);
  }
}

export type ImageEvent = (type: 'Normal' | 'Warning', reason: string, message: string) => void;

/**
 * What a pull that cannot reach the registry does: `fallback` (Outpost's default) starts the
 * container from the image the node already has, `strict` fails as kubelet does.
 */
export type ImagePullMode = 'fallback' | 'strict';

interface Failure {
  count: number;
  at: number;
  /** Why the registry was not reached, when that was the failure (the fallback applies). */
  unreachable: string | undefined;
  message: string;
}

/** The digest a PullFallback event names: the manifest digest when the runtime knows one, else the image id. */
export const cachedDigest = (img: Image): string => img.repoDigests[0] ?? img.id;

/**
 * Image pulls by imagePullPolicy, with kubelet's pull backoff (10 s doubling to 5 min) per image,
 * and, unless strict, the offline fallback: a pull that fails because the registry cannot be
 * reached starts the container from the local image, with a Warning event PullFallback.
 */
export class ImagePuller {
  readonly #failures = new Map<string, Failure>();
  /** ImageStatus calls in flight, by image: pods asking at the same moment share one. */
  readonly #checking = new Map<string, Promise<Image | null>>();

  constructor(
    private readonly cri: CriClient,
    private readonly now: () => number,
    private readonly pullTimeoutMs = 120_000,
    private readonly mode: ImagePullMode = 'fallback',
  ) {}

  /**
   * The runtime's image, or null; asked once for every caller while a call for it is in flight.
   * `signal` (the agent's, the same for every caller) cancels the call.
   */
  #status(image: string, signal: AbortSignal | undefined): Promise<Image | null> {
    let pending = this.#checking.get(image);
    if (!pending) {
      pending = this.cri.imageStatus(image, signal).finally(() => this.#checking.delete(image));
      this.#checking.set(image, pending);
    }
    return pending;
  }

  /**
   * Starts the presence check `ensure` makes for the container, so that it runs beside other work
   * (the pod's sandbox being created); undefined when `ensure` would not ask (pull policy Always,
   * an invalid name). A failed check is `ensure`'s to report. `signal` cancels it (the agent stopping).
   */
  check(c: Container, signal?: AbortSignal): Promise<Image | null> | undefined {
    const image = c.image ?? '';
    if (!image || /\s/.test(image) || (c.imagePullPolicy ?? 'IfNotPresent') === 'Always') return undefined;
    const pending = this.#status(image, signal);
    pending.catch(() => {});
    return pending;
  }

  /**
   * Makes sure the container's image is present; returns its image reference. `checked`: the
   * presence check `check(c)` started earlier, used instead of asking again. `signal` cancels the
   * pull and the presence checks (the agent stopping): the error is rethrown as it is, with no event
   * and no failure kept for the image's backoff, so neither this pod nor another one pulling the
   * image sees a failed pull.
   */
  async ensure(
    c: Container,
    event: ImageEvent,
    checked?: Promise<Image | null>,
    signal?: AbortSignal,
  ): Promise<string> {
    const image = c.image ?? '';
    if (!image || /\s/.test(image))
      throw new ImageError(
        'InvalidImageName',
        `Failed to apply default image tag "${image}": invalid reference format`,
      );
    const policy = c.imagePullPolicy ?? 'IfNotPresent';
    if (policy !== 'Always') {
      const present = await (checked ?? this.#status(image, signal));
      if (present) {
        event('Normal', 'Pulled', `Container image "${image}" already present on machine`);
        return present.id;
      }
      if (policy === 'Never') {
        const msg = `Container image "${image}" is not present with pull policy of Never`;
        event('Warning', 'ErrImageNeverPull', msg);
        throw new ImageError('ErrImageNeverPull', msg);
      }
    }
    const failed = this.#failures.get(image);
    if (
      failed &&
      this.now() < failed.at + backoffDelay(failed.count - 1, { initialMs: 10_000, maxMs: 300_000 })
    ) {
      // Within the backoff the registry is not asked again; an offline node keeps using its copy.
      const local = failed.unreachable ? await this.#fallback(image, failed, event, signal) : undefined;
      if (local) return local;
      const msg = `Back-off pulling image "${image}"`;
      event('Normal', 'BackOff', msg);
      throw new ImageError('ImagePullBackOff', msg);
    }
    event('Normal', 'Pulling', `Pulling image "${image}"`);
    const started = this.now();
    // The pull's own deadline cancels the runtime's pull too: a pull left running behind it would
    // go on for the client's 10 minutes beside the next attempt's.
    const deadline = AbortSignal.timeout(this.pullTimeoutMs);
    try {
      const ref = await this.cri.pullImage(image, {
        signal: signal ? AbortSignal.any([signal, deadline]) : deadline,
      });
      this.#failures.delete(image);
      event('Normal', 'Pulled', `Successfully pulled image "${image}" in ${this.now() - started}ms`);
      return ref;
    } catch (caught) {
      if (signal?.aborted) throw caught;
      const e = deadline.aborted
        ? timeout(`pull did not finish within ${this.pullTimeoutMs / 1000}s`)
        : caught;
      const prev = this.#failures.get(image);
      const message = (e as Error).message;
      const unreachable = isRegistryUnreachable(e) ? (unreachableCause(message) ?? 'timeout') : undefined;
      const failure = { count: (prev?.count ?? 0) + 1, at: this.now(), unreachable, message };
      this.#failures.set(image, failure);
      const local = unreachable ? await this.#fallback(image, failure, event, signal) : undefined;
      if (local) return local;
      const msg = `Failed to pull image "${image}": ${message}`;
      event('Warning', 'Failed', msg);
      throw new ImageError('ErrImagePull', msg);
    }
  }

  /**
   * The local image's id when the fallback applies (not strict, image present), after its event.
   * A check cancelled by `signal` throws: no back-off, no failure for a pull that was not decided.
   */
  async #fallback(
    image: string,
    failure: Failure,
    event: ImageEvent,
    signal: AbortSignal | undefined,
  ): Promise<string | undefined> {
    if (this.mode === 'strict') return undefined;
    const local = await this.cri.imageStatus(image, signal).catch((e: unknown) => {
      if (signal?.aborted) throw e;
      return null;
    });
    if (!local) return undefined;
    event(
      'Warning',
      'PullFallback',
      `Registry unreachable pulling image "${image}" (${failure.unreachable}); ` +
        `using the cached image ${cachedDigest(local)}`,
    );
    return local.id;
  }
}
