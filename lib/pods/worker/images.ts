import type { CriClient } from '#lib/cri/client.ts';
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

/** Image pulls by imagePullPolicy, with kubelet's pull backoff (10 s doubling to 5 min) per image. */
export class ImagePuller {
  readonly #failures = new Map<string, { count: number; at: number }>();

  constructor(
    private readonly cri: CriClient,
    private readonly now: () => number,
    private readonly pullTimeoutMs = 120_000,
  ) {}

  /** Makes sure the container's image is present; returns its image reference. */
  async ensure(c: Container, event: ImageEvent): Promise<string> {
    const image = c.image ?? '';
    if (!image || /\s/.test(image))
      throw new ImageError(
        'InvalidImageName',
        `Failed to apply default image tag "${image}": invalid reference format`,
      );
    const policy = c.imagePullPolicy ?? 'IfNotPresent';
    if (policy !== 'Always') {
      const present = await this.cri.imageStatus(image);
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
      const msg = `Back-off pulling image "${image}"`;
      event('Normal', 'BackOff', msg);
      throw new ImageError('ImagePullBackOff', msg);
    }
    event('Normal', 'Pulling', `Pulling image "${image}"`);
    const started = this.now();
    try {
      const ref = await Promise.race([
        this.cri.pullImage(image),
        new Promise<never>((_, reject) =>
          setTimeout(
            () => reject(new Error(`pull did not finish within ${this.pullTimeoutMs / 1000}s`)),
            this.pullTimeoutMs,
          ).unref(),
        ),
      ]);
      this.#failures.delete(image);
      event('Normal', 'Pulled', `Successfully pulled image "${image}" in ${this.now() - started}ms`);
      return ref;
    } catch (e) {
      const prev = this.#failures.get(image);
      this.#failures.set(image, { count: (prev?.count ?? 0) + 1, at: this.now() });
      const msg = `Failed to pull image "${image}": ${(e as Error).message}`;
      event('Warning', 'Failed', msg);
      throw new ImageError('ErrImagePull', msg);
    }
  }
}
