/** Request fields that identity's routes and the email flows' routes both take (the contract's). */
export { Password } from '@gatehouse/contract';
