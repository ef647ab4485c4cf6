/*
 * crawl_assets (Apache-2.0): the analysis-common stemming filters that
 * bench/persian_search_eval.py's Elasticsearch variant uses, each a thin factory over its Lucene class:
 *
 *   persian_stem      (PersianStemFilter)
 *   arabic_stem       (ArabicStemFilter)
 *   keyword_marker    (SetKeywordMarkerFilter; `keywords`, `ignore_case`)
 *   stemmer_override  (StemmerOverrideFilter; `rules`: "a => b" or "a, b => c")
 *
 * The factories implement TokenFilterFactory directly (its constructor-free interface is the same on the
 * 8.x and 9.x lines). No template of ours uses them (records carry text_lemma, written by us): they are
 * here so that the bench and crawl_assets_tests/index/test_es_stemming.py run on a node without analysis-common.
 */
package org.crawlassets.testanalysis;

import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.ar.ArabicStemFilter;
import org.apache.lucene.analysis.fa.PersianStemFilter;
import org.apache.lucene.analysis.miscellaneous.SetKeywordMarkerFilter;
import org.apache.lucene.analysis.miscellaneous.StemmerOverrideFilter;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.index.analysis.TokenFilterFactory;
import org.elasticsearch.indices.analysis.AnalysisModule.AnalysisProvider;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

final class StemmingFilters {
    private StemmingFilters() {}

    static Map<String, AnalysisProvider<TokenFilterFactory>> tokenFilters() {
        Map<String, AnalysisProvider<TokenFilterFactory>> out = new TreeMap<>();
        out.put("persian_stem", (i, env, name, s) -> new Factory(name, PersianStemFilter::new));
        out.put("arabic_stem", (i, env, name, s) -> new Factory(name, ArabicStemFilter::new));
        out.put("keyword_marker", (i, env, name, s) -> keywordMarker(name, s));
        out.put("stemmer_override", (i, env, name, s) -> stemmerOverride(name, s));
        return out;
    }

    static TokenFilterFactory keywordMarker(String name, Settings settings) {
        List<String> words = settings.getAsList("keywords");
        CharArraySet set = new CharArraySet(words, settings.getAsBoolean("ignore_case", false));
        return new Factory(name, stream -> new SetKeywordMarkerFilter(stream, set));
    }

    static TokenFilterFactory stemmerOverride(String name, Settings settings) {
        StemmerOverrideFilter.Builder builder = new StemmerOverrideFilter.Builder(false);
        for (String rule : settings.getAsList("rules")) {
            int arrow = rule.indexOf("=>");
            if (arrow < 0) {
                throw new IllegalArgumentException("Invalid Keyword override Rule:" + rule);
            }
            String target = rule.substring(arrow + 2).trim();
            for (String source : rule.substring(0, arrow).split(",")) {
                if (!source.trim().isEmpty()) {
                    builder.add(source.trim(), target);
                }
            }
        }
        final StemmerOverrideFilter.StemmerOverrideMap map;
        try {
            map = builder.build();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new Factory(name, stream -> new StemmerOverrideFilter(stream, map));
    }

    record Factory(String name, Function<TokenStream, TokenStream> filter) implements TokenFilterFactory {
        @Override
        public TokenStream create(TokenStream tokenStream) {
            return filter.apply(tokenStream);
        }
    }
}
