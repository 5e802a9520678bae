/** A failure that is reported to the application through redirectUrl (DESIGN "SSO"). */
export class SignInRefused extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}
