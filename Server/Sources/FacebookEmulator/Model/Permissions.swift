import Foundation
import LatchkeyAPI

/// The permissions the emulator knows, and which profile data each unlocks.
enum Permissions {
    /// Permission names Facebook's dialog accepts (a representative set; others are "Invalid Scopes").
    static let known: Set<String> = [
        "public_profile", "email", "openid", "user_friends", "user_birthday", "user_age_range", "user_gender",
        "user_hometown", "user_location", "user_link", "user_photos", "user_posts", "user_likes", "user_videos",
        "user_events", "user_messenger_contact", "gaming_profile", "gaming_user_picture", "pages_show_list",
        "pages_read_engagement", "pages_manage_posts", "business_management", "instagram_basic",
        "ads_management", "ads_read", "publish_video", "read_insights", "pages_messaging", "pages_manage_metadata",
        "pages_read_user_content", "pages_manage_engagement", "instagram_content_publish", "instagram_manage_comments",
        "instagram_manage_insights", "instagram_manage_messages", "leads_retrieval", "catalog_management",
        "whatsapp_business_management", "whatsapp_business_messaging", "user_managed_groups",
        "groups_access_member_info",
        "publish_to_groups", "attribution_read", "email_pending",
    ]

    /// The permission that unlocks each Graph user field (§5.1); fields not listed need only a token.
    static let graphField: [String: String] = [
        "email": "email",
        "birthday": "user_birthday",
        "gender": "user_gender",
        "link": "user_link",
        "location": "user_location",
        "hometown": "user_hometown",
        "friends": "user_friends",
        "age_range": "user_age_range",
    ]

    /// Graph user fields the emulator serves; others are "nonexisting field" errors.
    static let graphUserFields: Set<String> = [
        "id", "name", "first_name", "middle_name", "last_name", "short_name", "name_format", "email", "picture",
        "birthday", "gender", "link", "location", "hometown", "age_range", "friends", "permissions",
        "installed", "token_for_business",
    ]

    /// Parses a `scope` parameter: comma- or space-separated, empty items dropped.
    static func parse(_ scope: String?) -> [String] {
        guard let scope else { return [] }
        var seen = Set<String>()
        return scope.split(whereSeparator: { $0 == "," || $0 == " " })
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && seen.insert($0).inserted }
    }
}
