#include "sandboxes.hpp"

#include <ngfail/event_id.hpp>

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace ngfail::opensandbox::testing::detail {
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

bool shell_state::set(std::string name, std::string value) {
    const auto it = env_.find(name);
    const std::size_t old = it == env_.end() ? 0 : name.size() + it->second.size();
    const std::size_t bytes = bytes_ - old + name.size() + value.size();
    if (bytes > max_shell_variable_bytes) return false;
    bytes_ = bytes;
    if (it == env_.end()) {
        env_.emplace(std::move(name), std::move(value));
    } else {
        it->second = std::move(value);
    }
    return true;
}

std::optional<wall_clock::time_point> parse_rfc3339(std::string_view text) {
    std::tm utc{};
    const std::string copy(text);
    const char* end = ::strptime(copy.c_str(), "%Y-%m-%dT%H:%M:%S", &utc);
    if (!end) return std::nullopt;
    while (*end == '.' || (*end >= '0' && *end <= '9')) ++end;  // fractions of a second
    std::time_t offset = 0;
    if (*end == '+' || *end == '-') {
        int hours = 0;
        int minutes = 0;
        if (std::sscanf(end + 1, "%2d:%2d", &hours, &minutes) != 2 || hours > 23 || minutes > 59) return std::nullopt;
        offset = (*end == '+' ? 1 : -1) * (hours * 3600 + minutes * 60);
    } else if (*end != 'Z' && *end != 'z') {
        return std::nullopt;
    }
    // Past this the clock's nanoseconds would overflow: such a time is refused, not wrapped.
    constexpr std::time_t latest = 7'258'118'400;  // 2200-01-01T00:00:00Z
    const std::time_t seconds = ::timegm(&utc) - offset;
    if (seconds < 0 || seconds >= latest) return std::nullopt;
    return wall_clock::from_time_t(seconds);
}

std::variant<sandbox_record, sandbox_store::create_refusal> sandbox_store::create(
    boost::json::object image, boost::json::array entrypoint, boost::json::object metadata,
    std::optional<std::chrono::seconds> timeout, bool secure_access, const snapshot_record* restored_from) {
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
    if (restored_from) s.snapshot_id = restored_from->id;
    auto held = std::make_shared<held_sandbox>();
    held->record = s;
    const std::lock_guard lock(mutex_);
    if (sandboxes_.size() >= limits_.sandboxes) return create_refusal::too_many;
    if (restored_from) {
        // The snapshot may have been deleted since it was read: a sandbox then starts empty,
        // as a restore that raced a delete would find no image.
        if (const auto found = snapshots_.find(restored_from->id); found != snapshots_.end()) {
            held->files = found->second.files;
        }
    }
    const std::size_t footprint = held->files.footprint();
    if (footprint > limits_.file_bytes - std::min(limits_.file_bytes, file_bytes_.load())) {
        return create_refusal::no_space;
    }
    held->counted_bytes = footprint;
    file_bytes_ += footprint;
    sandboxes_.emplace(s.id, std::move(held));
    return s;
}

void sandbox_store::forget_sandbox(std::map<std::string, std::shared_ptr<held_sandbox>>::iterator it) {
    // A request may still hold the sandbox (its work finishing under the sandbox's lock):
    // the mark tells it the sandbox has gone, and that its bytes are no longer counted.
    file_bytes_ -= it->second->counted_bytes.exchange(gone_mark);
    sandboxes_.erase(it);
}

void sandbox_store::recount(held_sandbox& s, std::size_t counted_before) {
    const std::size_t now = s.files.footprint();
    if (s.counted_bytes.compare_exchange_strong(counted_before, now)) file_bytes_ += now - counted_before;
}

std::shared_ptr<sandbox_store::held_sandbox> sandbox_store::live_shared(const std::string& id) {
    const std::lock_guard lock(mutex_);
    held_sandbox* s = live(id);
    return s ? sandboxes_.find(id)->second : nullptr;
}

void sandbox_store::settle(snapshot_record& s) const {
    if (s.state != "Creating" || mono_clock::now() < s.ready_at) return;
    s.state = "Ready";
    s.reason = "snapshot_runtime_ready";
    s.message = std::string(profile_.snapshot_ready_message);
    s.transition_at = wall_clock::now();
}

std::variant<snapshot_record, sandbox_store::snapshot_refusal> sandbox_store::take_snapshot(
    const std::string& sandbox_id, std::optional<std::string> name) {
    std::shared_ptr<held_sandbox> source;
    {
        const std::lock_guard lock(mutex_);
        held_sandbox* s = live(sandbox_id);
        if (!s) return snapshot_refusal::no_sandbox;
        if (s->record.state != profile_.running.state) return snapshot_refusal::not_running;
        if (snapshots_.size() >= limits_.snapshots) return snapshot_refusal::full;
        source = sandboxes_.find(sandbox_id)->second;
    }
    // The files are copied under the sandbox's own lock (contents are shared, not copied),
    // then the snapshot is entered under the store's, its room checked again there.
    file_tree files;
    {
        const std::lock_guard lock(source->mutex);
        if (source->counted_bytes.load() == gone_mark) return snapshot_refusal::no_sandbox;
        files = source->files;
    }
    const std::lock_guard lock(mutex_);
    if (snapshots_.size() >= limits_.snapshots) return snapshot_refusal::full;
    if (files.footprint() > limits_.file_bytes - std::min(limits_.file_bytes, file_bytes_.load())) {
        return snapshot_refusal::no_space;
    }
    file_bytes_ += files.footprint();
    snapshot_record r{.id = to_string(event_id::generate()),
                      .sandbox_id = sandbox_id,
                      .name = std::move(name),
                      .state = "Creating",
                      .reason = "snapshot_accepted",
                      .message = "Snapshot creation accepted.",
                      .created_at = wall_clock::now(),
                      .transition_at = wall_clock::now(),
                      .ready_at = mono_clock::now() + pending_for_};
    snapshots_.emplace(r.id, held_snapshot{.record = r, .files = std::move(files)});
    return r;
}

std::optional<snapshot_record> sandbox_store::snapshot(const std::string& id) {
    const std::lock_guard lock(mutex_);
    const auto found = snapshots_.find(id);
    if (found == snapshots_.end()) return std::nullopt;
    settle(found->second.record);
    return found->second.record;
}

std::vector<snapshot_record> sandbox_store::snapshots() {
    const std::lock_guard lock(mutex_);
    std::vector<snapshot_record> found;
    for (auto& [id, held] : snapshots_) {
        settle(held.record);
        found.push_back(held.record);
    }
    std::ranges::sort(found, {}, &snapshot_record::created_at);
    return found;
}

sandbox_store::snapshot_erase sandbox_store::erase_snapshot(const std::string& id) {
    const std::lock_guard lock(mutex_);
    const auto found = snapshots_.find(id);
    if (found == snapshots_.end()) return snapshot_erase::no_snapshot;
    settle(found->second.record);
    if (found->second.record.state == "Creating") return snapshot_erase::creating;
    file_bytes_ -= found->second.files.footprint();
    snapshots_.erase(found);
    return snapshot_erase::erased;
}

void sandbox_store::settle(sandbox_record& s) const {
    if (mono_clock::now() < s.ready_at) return;
    const auto in = [&](const std::optional<status_shape>& phase) {
        return phase && s.state == phase->state && s.reason == phase->reason;
    };
    if (in(profile_.pending) || in(profile_.resuming)) {
        apply(s, profile_.running);
    } else if (in(profile_.pausing)) {
        apply(s, profile_.paused);
    }
}

std::optional<std::string> sandbox_store::pass(sandbox_record& s, std::string_view verb, const status_shape& from,
                                               const std::optional<status_shape>& passing, const status_shape& to) const {
    const bool in_progress = (profile_.pausing && s.state == profile_.pausing->state) ||
                             (profile_.resuming && s.state == profile_.resuming->state);
    if (in_progress) return "Cannot " + std::string(verb) + ": operation in progress (phase=" + s.state + ")";
    if (s.state != from.state) return "Sandbox " + s.id + " is not " + std::string(from.state);
    apply(s, passing.value_or(to));
    s.ready_at = mono_clock::now() + transition_for_;
    return std::nullopt;
}

bool sandbox_store::expired(const sandbox_record& s) const { return s.expires_at && wall_clock::now() >= *s.expires_at; }

sandbox_store::held_sandbox* sandbox_store::live(const std::string& id) {
    const auto it = sandboxes_.find(id);
    if (it == sandboxes_.end()) return nullptr;
    sandbox_record& record = it->second->record;
    if (expired(record)) {
        if (profile_.expiry_deletes) {
            forget_sandbox(it);
            return nullptr;
        }
        apply(record, profile_.expired);
    }
    settle(record);
    if (it->second->box && !holds_processes(record.state)) it->second->box.reset();
    return it->second.get();
}

bool sandbox_store::holds_processes(std::string_view state) const noexcept {
    const auto is = [&](const status_shape& shape) { return shape.state == state; };
    const auto passing = [&](const std::optional<status_shape>& shape) { return shape && is(*shape); };
    return is(profile_.pending) || is(profile_.running) || is(profile_.paused) || passing(profile_.pausing) ||
           passing(profile_.resuming);
}

void sandbox_store::attach(const std::string& id, std::shared_ptr<process_sandbox> box) {
    const std::lock_guard lock(mutex_);
    if (held_sandbox* s = live(id)) s->box = std::move(box);
}

std::shared_ptr<process_sandbox> sandbox_store::box(const std::string& id) {
    const std::lock_guard lock(mutex_);
    const held_sandbox* s = live(id);
    return s ? s->box : nullptr;
}

std::vector<std::pair<std::string, std::shared_ptr<process_sandbox>>> sandbox_store::sweep() {
    const std::lock_guard lock(mutex_);
    std::vector<std::string> ids;
    for (const auto& entry : sandboxes_) ids.push_back(entry.first);
    std::vector<std::pair<std::string, std::shared_ptr<process_sandbox>>> holding;
    for (const std::string& id : ids) {
        if (const held_sandbox* s = live(id); s && s->box) holding.emplace_back(id, s->box);
    }
    return holding;
}

std::optional<sandbox_record> sandbox_store::find(const std::string& id) {
    const std::lock_guard lock(mutex_);
    const held_sandbox* s = live(id);
    return s ? std::optional(s->record) : std::nullopt;
}

std::optional<sandbox_store::gate> sandbox_store::find_gate(const std::string& id) {
    const std::lock_guard lock(mutex_);
    const held_sandbox* s = live(id);
    if (!s) return std::nullopt;
    return gate{.state = s->record.state, .secure_access = s->record.secure_access,
                .access_token = s->record.access_token};
}

bool sandbox_store::update(const std::string& id, const std::function<void(sandbox_record&)>& change) {
    const std::lock_guard lock(mutex_);
    const auto it = sandboxes_.find(id);
    if (it == sandboxes_.end()) return false;
    settle(it->second->record);
    change(it->second->record);
    return true;
}

bool sandbox_store::erase(const std::string& id) {
    const std::lock_guard lock(mutex_);
    const auto it = sandboxes_.find(id);
    if (it == sandboxes_.end()) return false;
    forget_sandbox(it);
    return true;
}

sandbox_store::record_page sandbox_store::page(const std::function<bool(const sandbox_record&)>& keep,
                                               std::size_t first, std::size_t count) {
    const std::lock_guard lock(mutex_);
    std::vector<std::string> ids;
    for (const auto& [id, s] : sandboxes_) ids.push_back(id);
    record_page out;
    for (const std::string& id : ids) {
        const held_sandbox* s = live(id);  // may forget an expired sandbox
        if (!s || !keep(s->record)) continue;
        if (out.total >= first && out.records.size() < count) out.records.push_back(s->record);
        ++out.total;
    }
    return out;
}

std::optional<file_entry> sandbox_store::file(const std::string& sandbox_id, const std::string& path) {
    auto found = with_files(sandbox_id, [&](const file_tree& files) { return files.file(path); });
    return found ? *found : std::nullopt;
}

std::variant<command_run, sandbox_store::refused_start> sandbox_store::start_command(const std::string& sandbox_id,
                                                                                     std::string content,
                                                                                     bool background) {
    command_run c{.id = to_string(event_id::generate()),
                  .sandbox_id = sandbox_id,
                  .content = std::move(content),
                  .background = background,
                  .started_at = wall_clock::now()};
    const std::shared_ptr<held_sandbox> s = live_shared(sandbox_id);
    if (!s) return refused_start::no_sandbox;
    const std::lock_guard lock(s->mutex);
    if (s->counted_bytes.load() == gone_mark) return refused_start::no_sandbox;
    // Background commands only: a foreground one is held by its connection, which the
    // server's connection cap bounds.
    const auto running_in_background = [&] {
        return static_cast<std::size_t>(std::count_if(s->commands.begin(), s->commands.end(), [](const auto& held) {
            return held.second.run.running && held.second.run.background;
        }));
    };
    if (background && running_in_background() >= limits_.commands) return refused_start::too_many_running;
    // The line is kept once, here, and counted with the output: what a stranger's history
    // holds is bounded by `history_limits::output_bytes` whatever its lines' length.
    s->output_bytes += c.content.size();
    std::string line = std::exchange(c.content, {});
    command_run started = c;
    c.content = std::move(line);
    s->commands.emplace(started.id, held_command{.run = std::move(c)});
    forget_old_commands(*s);
    ++started_;
    return started;
}

// The first finished first; running commands stay (connections and background runs bound
// them). Only finished commands are queued, so 1,000 running ones are not walked past at
// every start.
void sandbox_store::forget_old_commands(held_sandbox& s) {
    while ((s.commands.size() > limits_.commands || s.output_bytes > limits_.output_bytes) && !s.finished.empty()) {
        const auto it = s.commands.find(s.finished.front());
        s.finished.pop_front();
        if (it == s.commands.end()) continue;
        s.output_bytes -= it->second.output.size() + it->second.run.content.size();
        s.commands.erase(it);
    }
}

sandbox_store::found_command sandbox_store::held(const std::string& sandbox_id, const std::string& command_id) {
    found_command found{.sandbox = live_shared(sandbox_id)};
    if (!found.sandbox) return {};
    found.lock = std::unique_lock(found.sandbox->mutex);
    if (found.sandbox->counted_bytes.load() == gone_mark) return {};
    const auto it = found.sandbox->commands.find(command_id);
    if (it == found.sandbox->commands.end()) return {};
    found.command = &it->second;
    return found;
}

void sandbox_store::append_output(const std::string& sandbox_id, const std::string& command_id, std::string_view text) {
    const auto [s, lock, c] = held(sandbox_id, command_id);
    if (!c || c->output_capped) return;
    std::string kept(text.substr(0, max_command_output - std::min(c->output.size(), max_command_output)));
    if (kept.size() < text.size()) {  // said once, after all that is kept
        kept += "\n[ngfail serve: this command's output past 16 MiB is not kept]\n";
        c->output_capped = true;
    }
    c->output += kept;
    s->output_bytes += kept.size();
    forget_old_commands(*s);
}

void sandbox_store::finish_command(const std::string& sandbox_id, const std::string& command_id, int exit_code,
                                   std::string error) {
    const auto [s, lock, c] = held(sandbox_id, command_id);
    if (!c || !c->run.running) return;  // the first ending stands
    c->run.running = false;
    c->run.exit_code = exit_code;
    c->run.error = std::move(error);
    c->run.finished_at = wall_clock::now();
    s->finished.push_back(command_id);
    forget_old_commands(*s);
}

std::optional<command_run> sandbox_store::command(const std::string& sandbox_id, const std::string& command_id) {
    const found_command found = held(sandbox_id, command_id);
    const held_command* c = found.command;
    return c ? std::optional(c->run) : std::nullopt;
}

std::optional<command_output> sandbox_store::output(const std::string& sandbox_id, const std::string& command_id,
                                                    std::size_t from) {
    const found_command found = held(sandbox_id, command_id);
    const held_command* c = found.command;
    if (!c) return std::nullopt;
    return command_output{.text = c->output.substr(std::min(from, c->output.size())), .end = c->output.size()};
}

bool sandbox_store::interrupt(const std::string& sandbox_id, const std::string& command_id) {
    const found_command found = held(sandbox_id, command_id);
    held_command* c = found.command;
    if (!c || !c->run.running) return false;
    c->interrupted = true;
    return true;
}

command_fate sandbox_store::fate(const std::string& sandbox_id, const std::string& command_id) {
    const found_command found = held(sandbox_id, command_id);
    const held_command* c = found.command;
    if (!c) return command_fate::gone;
    return c->interrupted ? command_fate::interrupted : command_fate::run_on;
}

}  // namespace ngfail::opensandbox::testing::detail
