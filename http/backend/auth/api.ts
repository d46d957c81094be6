/**
 * The auth and admin groups of the backend API (handlers: `handlers.ts`), and the session
 * middlewares through which a route declares the role it needs: `.middleware(RequireUser)`,
 * `RequireModerator` or `RequireAdmin`, once, on the endpoint or group. Each is an HttpApi
 * security middleware over the `predix_session` cookie, so the OpenAPI document lists the cookie
 * scheme and, per operation, that it is needed and which role (`documentRoles`).
 *
 * Without the cookie: AUTH_REQUIRED 401. Unknown, tampered, expired or signed-out session:
 * AUTH_INVALID 401. A role below the route's: FORBIDDEN 403.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Context, Either, Schema } from "effect"
import { BackendItem } from "../../../schema/envelopes.js"
import { AuthInvalid, AuthRequired, Forbidden, IndexerUnavailable, InvalidAddress } from "../../../schema/errors.js"
import { NotFound } from "../errors.js"
import { LOCALES } from "../locale.js"
import { AddressString, AddressTextPath, NoQuery, strictQuery } from "../../core/params.js"
import { NOTIFICATION_TYPES, ROLES, SESSION_COOKIE, type Role, type SessionUser } from "./sessions.js"
import { MAX_MESSAGE_LENGTH, MAX_SIGNATURE_HEX, NONCE_FORM, parseMessage, signatureProblem } from "./siwe.js"

/** The signed-in user, provided to handlers by the session middlewares. */
export class CurrentUser extends Context.Tag("predix/CurrentUser")<CurrentUser, SessionUser>() {}

const cookieScheme = HttpApiSecurity.apiKey({ key: SESSION_COOKIE, in: "cookie" }).pipe(
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "Session cookie set by POST /api/auth/verify (HttpOnly, SameSite=Lax, 7 days). The requirement's list names the role needed (moderator, admin); empty means any signed-in user."
  )
)

/** The security scheme's name in OpenAPI; the role variants are folded into it by `documentRoles`. */
const SCHEME = "session"

const sessionFailure = Schema.Union(AuthRequired.wire, AuthInvalid.wire, IndexerUnavailable.wire)
const roleFailure = Schema.Union(AuthRequired.wire, AuthInvalid.wire, Forbidden.wire, IndexerUnavailable.wire)

/** Any signed-in user. */
export class RequireUser extends HttpApiMiddleware.Tag<RequireUser>()("predix/RequireUser", {
  failure: sessionFailure,
  provides: CurrentUser,
  security: { [SCHEME]: cookieScheme }
}) {}

/** A moderator or an admin. */
export class RequireModerator extends HttpApiMiddleware.Tag<RequireModerator>()("predix/RequireModerator", {
  failure: roleFailure,
  provides: CurrentUser,
  security: { [`${SCHEME}:moderator`]: cookieScheme }
}) {}

/** An admin. */
export class RequireAdmin extends HttpApiMiddleware.Tag<RequireAdmin>()("predix/RequireAdmin", {
  failure: roleFailure,
  provides: CurrentUser,
  security: { [`${SCHEME}:admin`]: cookieScheme }
}) {}

/** The role each middleware demands. */
export const requiredRole: Record<string, Role> = { [SCHEME]: "user", [`${SCHEME}:moderator`]: "moderator", [`${SCHEME}:admin`]: "admin" }

type Json = Record<string, any>

/**
 * OpenAPI: one `session` cookie scheme; an operation's requirement lists the role it needs
 * (OpenAPI 3.1 lets non-OAuth requirements name roles), e.g. `[{ session: ["admin"] }]`.
 */
export const documentRoles = (spec: Json): Json => {
  const schemes: Json = spec["components"]?.["securitySchemes"] ?? {}
  for (const name of Object.keys(schemes)) if (name !== SCHEME && name.startsWith(`${SCHEME}:`)) delete schemes[name]
  for (const item of Object.values<Json>(spec["paths"] ?? {})) {
    for (const operation of Object.values<Json>(item)) {
      if (!Array.isArray(operation?.["security"])) continue
      operation["security"] = operation["security"].map((requirement: Json) =>
        Object.fromEntries(
          Object.keys(requirement).map((name) => {
            const role = requiredRole[name]
            return [SCHEME, role === undefined || role === "user" ? [] : [role]]
          })
        )
      )
    }
  }
  return spec
}

const unixSeconds = (description: string) => Schema.Int.annotations({ description })

export const Challenge = Schema.Struct({
  message: Schema.String.annotations({ description: "the EIP-4361 message to sign (personal_sign); it carries the nonce" }),
  nonce: Schema.String.annotations({ description: "the message's nonce (128 random bits, hex); may be sent back with the signature" }),
  issuedAt: unixSeconds("when the message was issued, unix seconds"),
  expiresAt: unixSeconds("when the message stops being accepted (10 minutes later), unix seconds")
}).annotations({ identifier: "AuthChallenge" })

export const RoleSchema = Schema.Literal(...ROLES).annotations({ identifier: "Role", description: "user < moderator < admin" })

export const SessionInfo = Schema.Struct({
  address: Schema.String.annotations({
    description: "the signed-in address, lowercase: the SIWE signer, or the smart account of a passkey or ECDSA sign-in"
  }),
  role: RoleSchema,
  method: Schema.String.annotations({
    description: "how the session was created: siwe, passkey (POST /api/aa/auth/passkey/login) or ecdsa (POST /api/aa/auth/ecdsa/verify)"
  }),
  owner: Schema.NullOr(Schema.String).annotations({
    description:
      "the smart account's owner, lowercase hex: the EOA (ecdsa) or abi.encode(x, y) of the passkey's P-256 key (passkey); null for siwe"
  }),
  smartAccount: Schema.NullOr(Schema.String).annotations({
    description: "the session's ERC-4337 smart account (factory getAddress(owner, 0), counterfactual; equals address); null for siwe"
  }),
  createdAt: unixSeconds("session start, unix seconds"),
  expiresAt: unixSeconds("session end, unix seconds (7 days after sign-in)")
}).annotations({ identifier: "SessionInfo" })

const Locale = Schema.Literal(...LOCALES)

const notificationFields = Object.fromEntries(NOTIFICATION_TYPES.map((t) => [t, Schema.Boolean])) as {
  [K in (typeof NOTIFICATION_TYPES)[number]]: typeof Schema.Boolean
}

export const Settings = Schema.Struct({
  locale: Locale.annotations({ description: "language of user-visible text" }),
  notifications: Schema.Struct(notificationFields).annotations({ description: "notification type -> enabled" })
}).annotations({ identifier: "UserSettings" })

export const SettingsPatch = Schema.Struct({
  locale: Schema.optionalWith(Locale, { exact: true }),
  notifications: Schema.optionalWith(
    Schema.partialWith(Schema.Struct(notificationFields), { exact: true }).annotations({ parseOptions: { onExcessProperty: "error" } }),
    { exact: true }
  )
}).annotations({ identifier: "UserSettingsPatch", parseOptions: { onExcessProperty: "error" } })

const signatureField = Schema.String.pipe(
  Schema.filter((s) => signatureProblem(s) ?? true, {
    jsonSchema: { pattern: "^0x([0-9a-fA-F]{2})+$", maxLength: MAX_SIGNATURE_HEX }
  })
).annotations({
  description: "0x-prefixed signature of the challenge's message: 65-byte ECDSA, or ERC-1271 / ERC-6492 bytes of a smart account"
})

const nonceField = Schema.optionalWith(
  Schema.String.pipe(
    Schema.filter((s) => NONCE_FORM.test(s) || "nonce malformed: the challenge's nonce is 24 to 64 letters and digits", {
      jsonSchema: { pattern: NONCE_FORM.source }
    })
  ).annotations({ description: "the challenge's nonce; without it, the message's, else the address's latest challenges are tried" }),
  { exact: true }
)

const messageField = Schema.String.pipe(
  Schema.filter((s) => Either.match(parseMessage(s), { onLeft: (why) => why, onRight: () => true }), {
    jsonSchema: { maxLength: MAX_MESSAGE_LENGTH }
  })
)

/**
 * The sign-in body of the ECDSA smart-account flow (`/api/aa/auth/ecdsa/verify`). Its form is
 * checked here, so a malformed field is 400 VALIDATION_FAILED naming it and reaches no query (a NUL
 * in `nonce` once reached Postgres and answered 503); what a well-formed body proves is checked by
 * `Sessions.signIn` (AUTH_INVALID 401 naming the check).
 */
export const VerifyBody = Schema.Struct({
  address: AddressString,
  signature: signatureField,
  nonce: nonceField,
  message: Schema.optionalWith(
    messageField.annotations({
      description:
        "the message that was signed, exactly as the challenge gave it (optional): with it, a refusal names the field that differs from what this server expects (domain, URI, chain id, nonce, time window) or says the signature is by another key"
    }),
    { exact: true }
  )
}).annotations({ identifier: "AuthVerifyBody", parseOptions: { onExcessProperty: "error" } })

/**
 * The SIWE sign-in body (`/api/auth/verify`): `{address, signature}` (the nonce and message
 * optional), or the wallet libraries' `{message, signature}`, whose signer is the message's
 * address. One of `address` and `message` is needed: the handler says so (VALIDATION_FAILED on
 * `address`), as the rest of the form is checked here.
 */
export const SignInBody = Schema.Struct({
  address: Schema.optionalWith(
    AddressString.annotations({ description: "the signer; optional when `message` is sent (then the message's address)" }),
    { exact: true }
  ),
  signature: signatureField,
  nonce: nonceField,
  message: Schema.optionalWith(
    messageField.annotations({
      description:
        "the challenge's message that was signed, unchanged; without `address` it names the signer. It is checked field by field against the challenge stored with its nonce (domain, address, statement, URI, version, chain id, nonce, issuedAt, expirationTime, ...): a refusal names the field that differs"
    }),
    { exact: true }
  )
}).annotations({ identifier: "AuthSignInBody", parseOptions: { onExcessProperty: "error" } })

/** `?ref=<code>`: the referral code the user arrived with (rewards; `referrals.ts`). */
export const VerifyQuery = strictQuery({
  ref: Schema.optionalWith(
    Schema.String.annotations({
      description:
        "a referral code (GET /api/referral): the first code a user signs in with makes its owner their referrer; unknown codes and one's own are VALIDATION_FAILED, checked before the challenge is used",
      jsonSchema: { type: "string", pattern: "^[a-z0-9]{8}$" }
    }),
    { exact: true }
  )
})

export const WsTicket = Schema.Struct({
  ticket: Schema.String.annotations({
    description: "open the stream with it: /ws/realtime?ticket=<ticket> (43 characters, base64url); once, within 30 s"
  }),
  expiresAt: unixSeconds("when the ticket stops opening connections (30 s after issue), unix seconds")
}).annotations({ identifier: "WsTicket" })

export const Logout = Schema.Struct({
  revoked: Schema.Boolean.annotations({
    description: "true when a live session was ended; false when there was none (logout is idempotent)"
  })
}).annotations({ identifier: "LogoutResult" })

export const UserRecord = Schema.Struct({
  address: Schema.String,
  role: RoleSchema,
  createdAt: unixSeconds("first sign-in (or admin grant), unix seconds")
}).annotations({ identifier: "UserRecord" })

export const RoleBody = Schema.Struct({ role: RoleSchema }).annotations({
  identifier: "RoleBody",
  parseOptions: { onExcessProperty: "error" }
})

export class AuthGroup extends HttpApiGroup.make("auth")
  .add(
    HttpApiEndpoint.get("challenge", "/api/auth/challenge")
      .setUrlParams(strictQuery({ address: AddressString }))
      .addSuccess(BackendItem(Challenge))
      .addError(InvalidAddress.wire)
      .annotate(OpenApi.Summary, "A SIWE (EIP-4361) message to sign; single use, valid 10 minutes (5 requests per minute per IP)")
  )
  .add(
    HttpApiEndpoint.post("verify", "/api/auth/verify")
      .setPayload(SignInBody)
      .setUrlParams(VerifyQuery)
      .addSuccess(BackendItem(SessionInfo))
      .addError(InvalidAddress.wire)
      .addError(AuthInvalid.wire)
      .annotate(
        OpenApi.Summary,
        "Signs in with the signed challenge: sets the predix_session cookie (HttpOnly, SameSite=Lax, Path=/, 7 days); AUTH_INVALID names the failed check (5 requests per minute per IP)"
      )
  )
  .add(
    HttpApiEndpoint.get("me", "/api/auth/me")
      .setUrlParams(NoQuery)
      .addSuccess(BackendItem(SessionInfo))
      .middleware(RequireUser)
      .annotate(OpenApi.Summary, "The signed-in user and session")
  )
  .add(
    HttpApiEndpoint.get("settings", "/api/auth/me/settings")
      .setUrlParams(NoQuery)
      .addSuccess(BackendItem(Settings))
      .middleware(RequireUser)
      .annotate(OpenApi.Summary, "The signed-in user's settings: locale and notification preferences")
  )
  .add(
    HttpApiEndpoint.patch("updateSettings", "/api/auth/me/settings")
      .setPayload(SettingsPatch)
      .addSuccess(BackendItem(Settings))
      .middleware(RequireUser)
      .annotate(OpenApi.Summary, "Changes some settings; fields left out keep their values")
  )
  .add(
    HttpApiEndpoint.post("wsTicket", "/api/auth/ws-ticket")
      .setUrlParams(NoQuery)
      .addSuccess(BackendItem(WsTicket))
      .middleware(RequireUser)
      .annotate(
        OpenApi.Summary,
        "A single-use ticket for the WebSocket's user topics (/ws/realtime?ticket=), valid 30 s, for apps on an allowed CORS origin whose page cannot give the session cookie to a WebSocket"
      )
  )
  .add(
    HttpApiEndpoint.post("logout", "/api/auth/logout")
      .addSuccess(BackendItem(Logout))
      .annotate(OpenApi.Summary, "Ends the cookie's session and clears the cookie; idempotent")
  ) {}

export class AdminGroup extends HttpApiGroup.make("admin")
  .add(
    HttpApiEndpoint.get("user", "/api/admin/users/:address")
      .setPath(AddressTextPath)
      .setUrlParams(NoQuery)
      .addSuccess(BackendItem(UserRecord))
      .addError(InvalidAddress.wire)
      .addError(NotFound.wire)
      .middleware(RequireModerator)
      .annotate(OpenApi.Summary, "A user's role (moderators and admins)")
  )
  .add(
    HttpApiEndpoint.put("setRole", "/api/admin/users/:address/role")
      .setPath(AddressTextPath)
      .setPayload(RoleBody)
      .addSuccess(BackendItem(UserRecord))
      .addError(InvalidAddress.wire)
      .middleware(RequireAdmin)
      .annotate(OpenApi.Summary, "Sets a user's role (admins only); ADMIN_ADDRESSES are made admins again at every start")
  ) {}
