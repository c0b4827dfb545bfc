import type { StatusCause } from './status.ts';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Problems with a DNS-1123 label (namespaces, container names), in the API server's words. */
export function checkDnsLabel(value: unknown, field: string): StatusCause[] {
  if (typeof value !== 'string' || value === '')
    return [{ field, reason: 'FieldValueRequired', message: 'Required value' }];
  if (value.length > 63 || !DNS1123_LABEL.test(value)) {
    return [
      {
        field,
        reason: 'FieldValueInvalid',
        message: `Invalid value: "${value}": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character`,
      },
    ];
  }
  return [];
}

/** Problems with a DNS-1123 subdomain (object names). */
export function checkDnsSubdomain(value: unknown, field: string): StatusCause[] {
  if (typeof value !== 'string' || value === '')
    return [{ field, reason: 'FieldValueRequired', message: 'Required value' }];
  if (value.length > 253 || !DNS1123_SUBDOMAIN.test(value)) {
    return [
      {
        field,
        reason: 'FieldValueInvalid',
        message: `Invalid value: "${value}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`,
      },
    ];
  }
  return [];
}

/** Whether a string is a valid object name; used to keep names out of file paths. */
export const isDnsSubdomain = (value: string): boolean =>
  value.length <= 253 && DNS1123_SUBDOMAIN.test(value);
