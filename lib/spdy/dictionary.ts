// The preset zlib dictionary of SPDY/3 header blocks (draft 3, section 2.6.10.1): length-prefixed
// header names and values, then a run of common status lines, dates and media types. 1423 bytes,
// the same bytes Go's spdystream (containerd, kubelet, client-go) compresses with.
const words = [
  'options',
  'head',
  'post',
  'put',
  'delete',
  'trace',
  'accept',
  'accept-charset',
  'accept-encoding',
  'accept-language',
  'accept-ranges',
  'age',
  'allow',
  'authorization',
  'cache-control',
  'connection',
  'content-base',
  'content-encoding',
  'content-language',
  'content-length',
  'content-location',
  'content-md5',
  'content-range',
  'content-type',
  'date',
  'etag',
  'expect',
  'expires',
  'from',
  'host',
  'if-match',
  'if-modified-since',
  'if-none-match',
  'if-range',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'pragma',
  'proxy-authenticate',
  'proxy-authorization',
  'range',
  'referer',
  'retry-after',
  'server',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'user-agent',
  'vary',
  'via',
  'warning',
  'www-authenticate',
  'method',
  'get',
  'status',
  '200 OK',
  'version',
  'HTTP/1.1',
  'url',
  'public',
  'set-cookie',
  'keep-alive',
  'origin',
];
const tail =
  '100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505' +
  '203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request' +
  '401 Unauthorized403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented' +
  '503 Service UnavailableJan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 ' +
  'Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMTchunked,text/html,image/png,image/jpg,image/gif,' +
  'application/xml,application/xhtml+xml,text/plain,text/javascript,publicprivatemax-age=' +
  'gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.';

function build(): Buffer {
  const parts: Buffer[] = [];
  for (const w of words) {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(w.length);
    parts.push(len, Buffer.from(w, 'latin1'));
  }
  parts.push(Buffer.from(tail, 'latin1'));
  return Buffer.concat(parts);
}

/** The SPDY/3 header-compression dictionary. */
export const SPDY_DICTIONARY: Buffer = build();
