/**
 * What the account routes answer (./auth-routes.ts): each is checked against its schema
 * before it is sent, and the OpenAPI document shows it as a named schema.
 */
import { z } from 'zod';

const time = z.string().describe('YYYY-MM-DD HH:mm:ss, server local time');

/** What any user of an app may see of another. */
export const PublicUser = z
  .strictObject({
    id: z.int().describe("The user's id (the token's subject)"),
    username: z.string(),
    nickname: z.string(),
    avatar: z.string().describe("'' when the user has none"),
  })
  .meta({ title: 'PublicUser' });

/** A user search's answer: names and ids only. */
export const UserNames = z
  .strictObject({
    list: z
      .array(
        z
          .strictObject({ id: z.int(), username: z.string(), nickname: z.string() })
          .meta({ title: 'UserName' }),
      )
      .readonly()
      .describe('By username'),
  })
  .meta({ title: 'UserNames' });

export const User = PublicUser.extend({ app_code: z.string(), created_at: time }).meta({
  title: 'User',
});

export const LoginReply = z
  .strictObject({
    access_token: z.string(),
    token_type: z.literal('Bearer'),
    expires_in: z.int().describe('Seconds until the token expires'),
    user: User,
  })
  .meta({ title: 'LoginReply' });

export const UserList = z
  .strictObject({ list: z.array(PublicUser).readonly() })
  .meta({ title: 'UserList' });
