/** `@gatehouse/nextjs`: the provider and the React components and hooks. Server code: `@gatehouse/nextjs/server`. */
export { GatehouseProvider, type GatehouseProviderProps } from './provider.js';
export {
  CreateOrganization,
  OrganizationProfile,
  OrganizationSwitcher,
  Protect,
  SignedIn,
  SignedOut,
  SignIn,
  SignUp,
  UserButton,
  UserProfile,
  useAuth,
  useGatehouse,
  useOrganization,
  useOrganizationList,
  useSession,
  useUser,
} from './client.js';
export type { Appearance } from '@gatehouse/react';
