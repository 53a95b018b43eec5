// Messages written and read back through the archives and codecs that the net layer uses,
// within one process: a round trip is the reference.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "troupe/core.hpp"

namespace {

struct sample {
  int id = 0;
  std::vector<std::string> names;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(id, names);
  }
  friend bool operator==(const sample&, const sample&) = default;
};

struct no_serialize {
  int value = 0;
};

/// Has the same name as a type of serialization_other_file.cpp: both live in anonymous
/// namespaces, whose types get the same mangled name in every file.
struct twin {
  int value = 0;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(value);
  }
};

template <class... Ts>
troupe::message round_trip(std::size_t segment_bytes, Ts... xs) {
  auto sent = troupe::make_message(xs...);
  const auto& codec = *sent.types()->codec();
  std::vector<std::byte> bytes;
  troupe::output_archive out{bytes};
  codec.save(sent, out, segment_bytes);
  troupe::input_archive in{bytes};
  troupe::message back{troupe::detail::intrusive_ptr<troupe::detail::message_data>{
      codec.load(in, segment_bytes), troupe::detail::adopt_ref}};
  // Segments were left out of the bytes: copy them over, as the transport would receive them.
  EXPECT_EQ(out.segments().size(), in.segments().size());
  for (std::size_t i = 0; i < in.segments().size(); ++i) {
    EXPECT_EQ(out.segments()[i].size(), in.segments()[i].size());
    std::memcpy(in.segments()[i].data(), out.segments()[i].data(), in.segments()[i].size());
  }
  EXPECT_EQ(in.remaining(), 0u);
  return back;
}

}  // namespace

TEST(serialization, standard_types_and_a_user_type_round_trip) {
  using all = std::tuple<int, double, std::string, std::vector<int>, std::map<std::string, int>,
                         std::optional<float>, std::variant<int, std::string>, troupe::errc,
                         troupe::error, sample>;
  all sent{-3,
           2.5,
           "text",
           {1, 2, 3},
           {{"k", 9}},
           1.5f,
           std::string{"v"},
           troupe::errc::kill,
           troupe::error{troupe::errc::out_of_range, "what"},
           sample{4, {"a", "b"}}};
  auto back =
      std::apply([](auto... xs) { return round_trip(troupe::detail::no_segments, xs...); }, sent);
  ASSERT_TRUE((back.match<int, double, std::string, std::vector<int>, std::map<std::string, int>,
                          std::optional<float>, std::variant<int, std::string>, troupe::errc,
                          troupe::error, sample>()));
  EXPECT_EQ(back.get_as<int>(0), -3);
  EXPECT_EQ(back.get_as<double>(1), 2.5);
  EXPECT_EQ(back.get_as<std::string>(2), "text");
  EXPECT_EQ(back.get_as<std::vector<int>>(3), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ((back.get_as<std::map<std::string, int>>(4)), (std::map<std::string, int>{{"k", 9}}));
  EXPECT_EQ(back.get_as<std::optional<float>>(5), 1.5f);
  EXPECT_EQ((back.get_as<std::variant<int, std::string>>(6)),
            (std::variant<int, std::string>{"v"}));
  EXPECT_EQ(back.get_as<troupe::errc>(7), troupe::errc::kill);
  EXPECT_EQ(back.get_as<troupe::error>(8).code(), troupe::errc::out_of_range);
  EXPECT_STREQ(back.get_as<troupe::error>(8).what(), "what");
  EXPECT_EQ(back.get_as<sample>(9), (sample{4, {"a", "b"}}));
}

TEST(serialization, large_blocks_become_segments_that_are_not_copied) {
  std::vector<double> big(100000);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<double>(i) / 3;
  auto sent = troupe::make_message(big, std::string(10, 'x'));
  std::vector<std::byte> bytes;
  troupe::output_archive out{bytes};
  sent.types()->codec()->save(sent, out, 1024);
  ASSERT_EQ(out.segments().size(), 1u);  // the short string stays inline
  EXPECT_EQ(out.segments()[0].data(),
            reinterpret_cast<const std::byte*>(sent.get_as<std::vector<double>>(0).data()));
  EXPECT_LT(bytes.size(), 64u);
  auto back = round_trip(1024, big, std::string(10, 'x'));
  EXPECT_EQ(back.get_as<std::vector<double>>(0), big);
}

TEST(serialization, empty_vectors_and_strings_round_trip) {
  // An empty vector's data() may be null: reading nothing into it must not hand null to memcpy.
  auto back = round_trip(troupe::detail::no_segments, std::vector<std::byte>{}, std::string{},
                         std::vector<double>{});
  ASSERT_TRUE((back.match<std::vector<std::byte>, std::string, std::vector<double>>()));
  EXPECT_TRUE(back.get_as<std::vector<std::byte>>(0).empty());
  EXPECT_TRUE(back.get_as<std::string>(1).empty());
  EXPECT_TRUE(back.get_as<std::vector<double>>(2).empty());
}

TEST(serialization, a_type_without_serialize_is_named) {
  const auto& codec = *troupe::detail::type_list_of<int, no_serialize>.codec();
  ASSERT_NE(codec.unencodable, nullptr);
  EXPECT_NE(troupe::detail::type_name(*codec.unencodable).find("no_serialize"), std::string::npos);
  EXPECT_EQ(codec.save, nullptr);
  EXPECT_EQ(troupe::detail::type_list_of<std::vector<no_serialize>>.codec()->unencodable,
            &typeid(std::vector<no_serialize>));
}

TEST(serialization, messages_that_stay_in_their_process_need_no_codec) {
  // These compiled before messages could cross nodes, and still do; they only cannot cross.
  int value = 7;
  auto pointer = troupe::make_message(&value);
  EXPECT_EQ(*pointer.get_as<int*>(0), 7);
  EXPECT_NE(pointer.types()->codec()->unencodable, nullptr);
  auto bits = troupe::make_message(std::vector<bool>{true, false});
  EXPECT_EQ(bits.types()->codec()->unencodable, nullptr);  // cereal writes it bit by bit
  auto multi = troupe::make_message(std::multimap<int, no_serialize>{});
  EXPECT_NE(multi.types()->codec()->unencodable, nullptr);
  auto back = round_trip(troupe::detail::no_segments, std::vector<bool>{true, false, true});
  EXPECT_EQ(back.get_as<std::vector<bool>>(0), (std::vector<bool>{true, false, true}));
}

std::uint64_t twin_key_of_the_other_file();

TEST(serialization, types_of_anonymous_namespaces_get_keys_of_their_own) {
  const auto* here = troupe::detail::type_list_of<twin>.codec();
  const std::uint64_t there = twin_key_of_the_other_file();
  EXPECT_NE(here->key, there);
  EXPECT_EQ(troupe::detail::find_codec(here->key), here);
  ASSERT_NE(troupe::detail::find_codec(there), nullptr);
  EXPECT_NE(troupe::detail::find_codec(there), here);
}

TEST(serialization, damaged_bytes_fail_with_an_error_not_a_crash) {
  auto sent = troupe::make_message(std::string{"hello"}, std::vector<int>{1, 2, 3});
  const auto& codec = *sent.types()->codec();
  std::vector<std::byte> bytes;
  troupe::output_archive out{bytes};
  codec.save(sent, out, troupe::detail::no_segments);
  // Every shorter prefix is refused.
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    troupe::input_archive in{std::span<const std::byte>{bytes.data(), cut}};
    EXPECT_THROW(codec.load(in, troupe::detail::no_segments), troupe::error) << cut;
  }
  // A size of 2^60 elements fails before it allocates.
  std::vector<std::byte> huge(16, std::byte{0});
  const std::uint64_t count = std::uint64_t{1} << 60;
  std::memcpy(huge.data(), &count, sizeof count);
  troupe::input_archive in{huge};
  EXPECT_THROW(troupe::detail::type_list_of<std::vector<std::string>>.codec()->load(
                   in, troupe::detail::no_segments),
               troupe::error);
  // A handle needs the net layer's codec.
  troupe::actor_system sys;
  auto a = sys.spawn([](int x) { return x; });
  auto with_handle = troupe::make_message(a);
  std::vector<std::byte> more;
  troupe::output_archive handles{more};
  EXPECT_THROW(
      with_handle.types()->codec()->save(with_handle, handles, troupe::detail::no_segments),
      troupe::error);
}
