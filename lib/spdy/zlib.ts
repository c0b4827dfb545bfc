import { constants, createDeflate, createInflate, type Deflate, type Inflate } from 'node:zlib';
import { SPDY_DICTIONARY } from './dictionary.ts';
import { decodeHeaderBlock, encodeHeaderBlock, type SpdyHeaders } from './frames.ts';

// One zlib stream per direction for the whole connection (section 2.6.10.1): every header block is
// a sync-flushed continuation of it, so blocks must be (de)compressed in wire order.
class FlushedStream {
  private chunks: Buffer[] = [];
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly z: Deflate | Inflate) {
    z.on('data', (c: Buffer) => this.chunks.push(c));
    z.on('error', () => {}); // reported to the pending run; a broken context fails every later one
  }

  run(input: Buffer): Promise<Buffer> {
    const next = this.queue.then(
      () =>
        new Promise<Buffer>((resolve, reject) => {
          const fail = (e: Error) => reject(e);
          this.z.once('error', fail);
          this.chunks = [];
          this.z.write(input);
          this.z.flush(constants.Z_SYNC_FLUSH, () => {
            this.z.off('error', fail);
            resolve(Buffer.concat(this.chunks));
          });
        }),
    );
    this.queue = next.catch(() => {});
    return next;
  }

  close(): void {
    this.z.close();
  }
}

/** Compresses outgoing and decompresses incoming SPDY/3 header blocks of one connection. */
export class HeaderCodec {
  private readonly deflate = new FlushedStream(createDeflate({ dictionary: SPDY_DICTIONARY }));
  private readonly inflate = new FlushedStream(createInflate({ dictionary: SPDY_DICTIONARY }));

  encode(headers: SpdyHeaders): Promise<Buffer> {
    return this.deflate.run(encodeHeaderBlock(headers));
  }

  async decode(block: Buffer): Promise<SpdyHeaders> {
    return decodeHeaderBlock(await this.inflate.run(block));
  }

  close(): void {
    this.deflate.close();
    this.inflate.close();
  }
}
