/** Outpost's roles, each including the ones before it. */
export const ROLES = ['viewer', 'operator', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export const isRole = (v: string): v is Role => (ROLES as readonly string[]).includes(v);

/** Whether `have` is at least `need`. */
export const allows = (have: Role, need: Role): boolean => ROLES.indexOf(have) >= ROLES.indexOf(need);

/** Who is calling: `anonymous` has no credentials, `socket` came through the root-only unix socket. */
export interface Principal {
  user: string;
  role: Role;
  via: 'token' | 'certificate' | 'anonymous' | 'socket';
}
