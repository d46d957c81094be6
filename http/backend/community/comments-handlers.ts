/**
 * Handlers of the comments group: each calls the comments service (`comments-service.ts`) and
 * answers from the backend's own tables (`respond.own`: never cached, not behind the indexer
 * breaker). A post answers 201 Created, as the endpoint declares.
 */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { CurrentUser } from "../auth/api.js"
import { BackendApi } from "../definition.js"
import { own, ownList } from "../respond.js"
import { Comment } from "./comments-api.js"
import { changeComment, listComments, postComment } from "./comments-service.js"

const comment = own(Comment)
const comments = ownList(Comment)

export const CommentsLive = HttpApiBuilder.group(BackendApi, "comments", (handlers) =>
  Effect.succeed(
    handlers
      .handle("list", ({ path, urlParams }) => comments(() => listComments(path.idOrSlug, urlParams)))
      .handle("create", ({ path, payload }) =>
        comment(() => Effect.flatMap(CurrentUser, (user) => postComment(user, path.idOrSlug, payload))).pipe(
          Effect.map(HttpServerResponse.setStatus(201))
        )
      )
      .handle("update", ({ path, payload }) =>
        comment(() => Effect.flatMap(CurrentUser, (user) => changeComment(user, path.idOrSlug, path.commentId, payload)))
      )
  )
)
