// Crawlers, link unfurlers and monitors that follow links without a person behind them.
const BOT_PATTERN =
  /bot\b|bot\/|crawler|spider|crawling|slurp|facebookexternalhit|facebookcatalog|embedly|quora link preview|bitlybot|vkshare|w3c_validator|redditbot|applebot|whatsapp|skypeuripreview|nuzzel|discordbot|google-inspectiontool|googleother|mediapartners-google|adsbot|apis-google|feedfetcher|lighthouse|pingdom|uptimerobot|statuscake/i;

/** True for a user agent of a known bot: its visit is redirected but not counted as a click. */
export function isBot(userAgent: string | undefined): boolean {
  return userAgent !== undefined && BOT_PATTERN.test(userAgent);
}
