#include "sandboxes.hpp"

#include <ngfail/event_id.hpp>

#include <cstdio>
#include <ctime>

namespace ngfail::opensandbox::emulator {
namespace {

void apply(sandbox_record& s, const status_shape& shape) {
    s.state = std::string(shape.state);
    s.reason = std::string(shape.reason);
    s.message = message_for(shape, s.id);
}

}  // namespace

std::string rfc3339(wall_clock::time_point t) {
    const std::time_t seconds = wall_clock::to_time_t(t);
    std::tm utc{};
    ::gmtime_r(&seconds, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

std::optional<wall_clock::time_point> parse_rfc3339(std::string_view text) {
    std::tm utc{};
    const std::string copy(text);
    const char* end = ::strptime(copy.c_str(), "%Y-%m-%dT%H:%M:%S", &utc);
    if (!end) return std::nullopt;
    while (*end == '.' || (*end >= '0' && *end <= '9')) ++end;  // fractions of a second
    if (*end != 'Z' && *end != '+' && *end != '-') return std::nullopt;
    return wall_clock::from_time_t(::timegm(&utc));
}

sandbox_record sandbox_store::create(boost::json::object image, boost::json::array entrypoint,
                                     boost::json::object metadata, std::optional<std::chrono::seconds> timeout,
                                     bool secure_access) {
    sandbox_record s;
    s.id = to_string(event_id::generate());
    s.image = std::move(image);
    s.entrypoint = std::move(entrypoint);
    s.metadata = std::move(metadata);
    s.created_at = wall_clock::now();
    if (timeout) s.expires_at = s.created_at + *timeout;
    s.ready_at = mono_clock::now() + pending_for_;
    s.secure_access = secure_access;
    if (secure_access) s.access_token = to_string(event_id::generate());
    apply(s, profile_.pending);
    settle(s);
    const std::lock_guard lock(mutex_);
    sandboxes_.emplace(s.id, s);
    return s;
}

void sandbox_store::settle(sandbox_record& s) const {
    if (s.state == profile_.pending.state && s.reason == profile_.pending.reason && mono_clock::now() >= s.ready_at) {
        apply(s, profile_.running);
    }
}

bool sandbox_store::expired(const sandbox_record& s) const { return s.expires_at && wall_clock::now() >= *s.expires_at; }

std::optional<sandbox_record> sandbox_store::find(const std::string& id) {
    const std::lock_guard lock(mutex_);
    const auto it = sandboxes_.find(id);
    if (it == sandboxes_.end()) return std::nullopt;
    if (expired(it->second)) {
        if (profile_.expiry_deletes) {
            sandboxes_.erase(it);
            return std::nullopt;
        }
        apply(it->second, profile_.expired);
    }
    settle(it->second);
    return it->second;
}

bool sandbox_store::update(const std::string& id, const std::function<void(sandbox_record&)>& change) {
    const std::lock_guard lock(mutex_);
    const auto it = sandboxes_.find(id);
    if (it == sandboxes_.end()) return false;
    settle(it->second);
    change(it->second);
    return true;
}

bool sandbox_store::erase(const std::string& id) {
    const std::lock_guard lock(mutex_);
    return sandboxes_.erase(id) != 0;
}

std::vector<sandbox_record> sandbox_store::all() {
    std::vector<std::string> ids;
    {
        const std::lock_guard lock(mutex_);
        for (const auto& [id, s] : sandboxes_) ids.push_back(id);
    }
    std::vector<sandbox_record> found;
    for (const std::string& id : ids) {
        if (auto s = find(id)) found.push_back(std::move(*s));
    }
    return found;
}

command_run sandbox_store::start_command(const std::string& sandbox_id, std::string content, bool background) {
    command_run c{.id = to_string(event_id::generate()),
                  .sandbox_id = sandbox_id,
                  .content = std::move(content),
                  .background = background,
                  .started_at = wall_clock::now()};
    const std::lock_guard lock(mutex_);
    commands_.emplace(c.id, c);
    return c;
}

void sandbox_store::append_output(const std::string& command_id, std::string_view text) {
    const std::lock_guard lock(mutex_);
    if (const auto it = commands_.find(command_id); it != commands_.end()) it->second.output.append(text);
}

void sandbox_store::finish_command(const std::string& command_id, int exit_code, std::string error) {
    const std::lock_guard lock(mutex_);
    const auto it = commands_.find(command_id);
    if (it == commands_.end()) return;
    it->second.running = false;
    it->second.exit_code = exit_code;
    it->second.error = std::move(error);
    it->second.finished_at = wall_clock::now();
}

std::optional<command_run> sandbox_store::command(const std::string& id) {
    const std::lock_guard lock(mutex_);
    const auto it = commands_.find(id);
    return it == commands_.end() ? std::nullopt : std::optional(it->second);
}

bool sandbox_store::interrupt(const std::string& command_id) {
    const std::lock_guard lock(mutex_);
    const auto it = commands_.find(command_id);
    if (it == commands_.end() || !it->second.running) return false;
    interrupts_[command_id] = true;
    return true;
}

bool sandbox_store::interrupted(const std::string& command_id) {
    const std::lock_guard lock(mutex_);
    return interrupts_.contains(command_id);
}

}  // namespace ngfail::opensandbox::emulator
